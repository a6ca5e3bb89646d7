/**
 * A real model no one here wrote: SmolLM2-135M-Instruct under llama.cpp's llama-server, whose
 * chat template has no tool support (the server drops the tools field). With nothing but the
 * model and the endpoint (`harness run --model smollm2`, OPENAI_BASE_URL), auto picks text mode
 * and the turn calls a tool and ends; the same turn with native forced shows the model ignoring
 * the tools, and the trace says which mode ran.
 * Greedy decoding (temperature 0) keeps the path repeatable; the test asserts the path, not the
 * model's quality. Default policy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionConfig } from '../../deterministic/session-config';
import type { ToolModeSetting } from '../../deterministic/tool-mode';
import { loadTrace } from '../../history/trace';
import { DEFAULT_POLICY, endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';
import { LOCAL_MODEL, startLocalModel, type LocalModel } from '../support/local-model';
import { watchedTurn } from '../support/watched-turn';
import { cliEnv, describeResult, parseJson, runCli } from '../support/cli';
import { figure } from '../support/figures';

let h: TestHarness;
let model: LocalModel;
beforeAll(async () => {
  [h, model] = await Promise.all([startHarness(), startLocalModel({ temp: 0 })]);
  h.declarations.add({ modelEndpoints: [model.url] });
}, 180_000);
afterAll(async () => {
  await h?.stop();
  await model?.close();
});

const TASK = 'What time is it now? Use the get_current_time tool.';

/** The local model's session: the model and the endpoint, a small reply cap, the default policy, nothing else set. */
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
  it('auto, through the CLI with only --model and the endpoint: the probe finds the tools dropped, text mode runs, the model calls the clock and the turn ends', async () => {
    const env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: h.home, OPENAI_BASE_URL: model.url });
    const out = await runCli(['run', '--model', LOCAL_MODEL, '--json', TASK], { env, timeoutMs: 540_000 });
    expect(out.code, `${describeResult(out)}\n${model.log()}`).toBe(0);
    const { workflow_id: turnId, terminated_by: end } = parseJson<{ workflow_id: string; terminated_by: string }>(out);
    // The turn ends on its own (an answer, or a limit the model ran into), never as a failed workflow.
    expect(['final_answer', 'finish', 'max_steps', 'error_limit', 'repeated_action']).toContain(end);
    const spans = (await loadTrace(h.client, turnId)).spans.map((b) => b.span);
    const llm = spans.filter((s) => s.type === 'llm_call');
    const calls = spans.filter((s) => s.type === 'tool_call');
    expect(spans.find((s) => s.type === 'turn')!.output.tool_mode, model.log()).toMatch(/^text \(JSON-schema constrained; probe: the endpoint dropped the tools/);
    expect(llm.every((s) => s.output.tool_mode === 'text')).toBe(true);
    expect(calls.some((s) => s.name.startsWith('get_current_time') && s.status === 'ok'), JSON.stringify(calls.map((c) => [c.name, c.status]))).toBe(true);
    figure('local-model-turns', `auto (CLI): ${end} in ${llm.length} model call(s); calls: ${calls.map((c) => `${c.name} ${c.status}`).join('; ')}`);
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
