/**
 * A model call that outlives the local-activity window (limits.modelLocalMs, 3 s by default) is
 * handed on to an activity; its duration in the trace is the model's, from the request to the
 * reply, not the activity's last second. And the tool the workflow ran before it, in the same
 * workflow task, ends where it ended, not when that task did (once the call was handed on).
 * Checked in `harness trace` text and `--json` under the default policy and limits.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import { cliEnv, describeResult, removeTempDirs, runCli, tempDir } from '../support/cli';
import { endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';

/** A span as `trace --json` gives it: the fields this test reads. */
type ShownSpan = { type: string; name: string; start: string; end: string; duration_ms: number; input: Record<string, unknown>; output: Record<string, unknown> | null };

const sessionId = newSessionId('trace-handoff');
let h: TestHarness;
let server: ScriptedModelServer;
let env: NodeJS.ProcessEnv;
let turnId: string;

beforeAll(async () => {
  h = await startHarness({ env: { OPENAI_API_KEY: 'test-key' } });
  server = await startScriptedModel();
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(tempDir('harness-trace-handoff-'), 'home') });
  // A quick step that lists the files, then an answer that takes a second past the local window.
  server.registerScript(sessionId, { steps: [{ tool_calls: [{ name: 'list_files', arguments: {} }] }, { fault: { delay_ms: 4_000 }, content: 'Done. HARNESS_OK' }] });
  const r = await h.finish(sessionId, endpointConfig(server.url), 'which files are there?');
  expect(r.answer).toBe('Done. HARNESS_OK');
  turnId = r.turnId;
}, 180_000);
afterAll(async () => {
  await server?.close();
  await h?.stop();
  removeTempDirs();
});

/** When the answer's request reached the endpoint. */
const answerAsked = () => server.requests.find((q) => q.session === sessionId && q.index === 1)!.at;

/** A text line's duration (`993ms`, `3.0s`) in milliseconds. */
function shownMs(line: string): number {
  const m = /(\d+)ms$|(\d+\.\d)s$/.exec(line.trim());
  if (!m) throw new Error(`no duration at the end of: ${line}`);
  return m[1] !== undefined ? Number(m[1]) : Number(m[2]) * 1000;
}

describe('trace of a model call handed on from its local activity', () => {
  it('`harness trace --json` gives the model its whole call and the tool before it only its own time', async () => {
    const r = await runCli(['trace', turnId, '--json'], { env, timeoutMs: 60_000 });
    expect(r.code, describeResult(r)).toBe(0);
    const spans = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as ShownSpan);
    const [, answer] = spans.filter((s) => s.type === 'llm_call');
    const list = spans.find((s) => s.type === 'tool_call' && s.name === 'list_files')!;
    // The call was handed on (it took longer than the window) and is one span from its request on.
    const latency = Number(answer!.output?.latency_ms);
    expect(latency).toBeGreaterThanOrEqual(4_000);
    expect(Date.parse(answer!.start)).toBeLessThanOrEqual(answerAsked());
    expect(answer!.duration_ms).toBeGreaterThanOrEqual(latency);
    // list_files ended before the answer was asked for.
    expect(Date.parse(list.end)).toBeLessThanOrEqual(answerAsked());
    expect(Date.parse(list.end)).toBeLessThanOrEqual(Date.parse(answer!.start));
  });

  it('`harness trace` text shows the model the longer line, at least its latency', async () => {
    const json = await runCli(['trace', turnId, '--json'], { env, timeoutMs: 60_000 });
    const latency = Number(json.stdout.trim().split('\n').map((l) => JSON.parse(l) as ShownSpan).filter((s) => s.type === 'llm_call')[1]!.output?.latency_ms);
    const r = await runCli(['trace', turnId], { env, timeoutMs: 60_000 });
    expect(r.code, describeResult(r)).toBe(0);
    const lines = r.stdout.split('\n');
    const models = lines.filter((l) => /^\s*model /.test(l));
    const tool = lines.find((l) => /^\s*tool list_files/.test(l))!;
    expect(models).toHaveLength(2);
    expect(models[1]).toMatch(/answer: Done\. HARNESS_OK/);
    // Shown to a tenth of a second.
    expect(shownMs(models[1]!)).toBeGreaterThanOrEqual(latency - 50);
    expect(shownMs(tool)).toBeLessThan(shownMs(models[1]!));
  });
});
