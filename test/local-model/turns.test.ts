/**
 * A real model no one here wrote: SmolLM2-135M-Instruct under llama.cpp's llama-server, whose
 * chat template has no tool support (the server drops the tools field). With nothing but the
 * model and the endpoint, auto picks text mode and the turn calls a tool and ends; the same
 * turn with native forced shows the model ignoring the tools, and the trace says which mode ran.
 * Greedy decoding (temperature 0) keeps the path repeatable; the test asserts the path, not the
 * model's quality. Default policy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionConfig } from '../../common/session';
import type { ToolModeSetting } from '../../common/tool-mode';
import { loadTrace } from '../../history/trace';
import { DEFAULT_POLICY, endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';
import { LOCAL_MODEL, startLocalModel, type LocalModel } from '../support/local-model';
import { watchedTurn } from '../support/watched-turn';
import { figure } from '../support/figures';

let h: TestHarness;
let model: LocalModel;
beforeAll(async () => {
  [h, model] = await Promise.all([startHarness(), startLocalModel({ temp: 0 })]);
}, 180_000);
afterAll(async () => {
  await h?.stop();
  await model?.close();
});

const TASK = 'What time is it now? Use the get_current_time tool.';

/** The local model's session: the model and the endpoint, a small reply cap, nothing else set (mode: `auto` unless given). */
function localConfig(toolMode?: ToolModeSetting): SessionConfig {
  const c = endpointConfig(model.url, { maxOutputTokens: 128, maxSteps: 3, modelTimeoutMs: 240_000 }, DEFAULT_POLICY);
  return { ...c, model: { provider: 'openai', model: LOCAL_MODEL, baseUrl: model.url, ...(toolMode ? { toolMode } : {}) } };
}

async function run(toolMode?: ToolModeSetting) {
  const sessionId = newSessionId(`local-${toolMode ?? 'auto'}`);
  const r = await watchedTurn(h, sessionId, localConfig(toolMode), TASK);
  const spans = (await loadTrace(h.client, `${sessionId}/turn-1`)).spans.map((b) => b.span);
  return { r, spans, llm: spans.filter((s) => s.type === 'llm_call') };
}

describe('SmolLM2 under llama-server', () => {
  it('auto: the probe finds the tools dropped, text mode runs, the model calls the clock and the turn ends', async () => {
    const { r, spans, llm } = await run();
    expect(r.toolMode, model.log()).toMatchObject({ mode: 'text', source: 'probe', reason: expect.stringContaining('dropped the tools') });
    expect(r.terminated_by).not.toBe('failed');
    expect(r.toolCalls.filter((c) => c.name === 'get_current_time' && c.ok).length, JSON.stringify(r.messages)).toBeGreaterThan(0);
    expect(llm.every((s) => s.output.tool_mode === 'text')).toBe(true);
    expect(llm.some((s) => (s.output.tool_calls as unknown[]).length > 0)).toBe(true);
    expect(spans.find((s) => s.type === 'turn')!.output.tool_mode).toMatch(/^text \(/);
    figure('local-model-turns', `auto chose ${JSON.stringify(r.toolMode)}; calls: ${r.toolCalls.map((c) => `${c.name} ${JSON.stringify(c.args)} ${c.ok ? 'ok' : c.error_type}`).join('; ')}; ${r.terminated_by} in ${r.steps} step(s): ${r.answer.slice(0, 200)}`);
  }, 600_000);

  it('native forced: the tools field is dropped, the model answers without calling any; the trace says native', async () => {
    const { r, spans, llm } = await run('native');
    expect(r.toolMode).toMatchObject({ mode: 'native', source: 'configured' });
    expect([r.terminated_by, r.toolCalls.length]).toEqual(['final_answer', 0]);
    expect(llm.map((s) => s.output.tool_mode)).toEqual(['native']);
    expect(spans.find((s) => s.type === 'turn')!.output.tool_mode).toMatch(/^native \(configured/);
    figure('local-model-turns', `native: ${r.terminated_by} without a call: ${r.answer.slice(0, 200)}`);
  }, 600_000);
});
