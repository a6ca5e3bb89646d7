/**
 * Each call of a step shows its own result in every view of the trace, even when a call before
 * it ran as a local activity and failed its own argument check (get_current_time with an
 * unknown time zone answers INVALID_ARGUMENTS, the error the workflow gives calls it refuses
 * before running them). Local activities leave markers without the call's id; the views must
 * not give the next local call the failed one's result. Checked in `harness trace` text and
 * `--json`, the console's /api/trace and the OTLP spans the export sends.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HarnessClient } from '../../api/client';
import { startConsole, type ConsoleServer } from '../../console/server';
import { toOtelSpans } from '../../history/trace/otlp-spans';
import { traceResource } from '../../history/trace/otlp';
import { cliEnv, describeResult, removeTempDirs, runCli, tempDir } from '../support/cli';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';

const TOKEN = 'trace-pairing-token-0123456789abcdef';
const sessionId = newSessionId('trace-pairing');
let h: TestHarness;
let env: NodeJS.ProcessEnv;
let server: ConsoleServer;

/** A span as the views give it: the fields this test reads. */
type ShownSpan = { type: string; name: string; status: string; error: string | null; output: Record<string, unknown> | null; input: Record<string, unknown> };

beforeAll(async () => {
  h = await startHarness();
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(tempDir('harness-trace-pairing-'), 'home') });
  const script = {
    steps: [
      // Both run as local activities; the first fails inside the tool, the second succeeds.
      { tool_calls: [{ name: 'get_current_time', arguments: { timezone: 'US_CET' } }, { name: 'list_files', arguments: {} }] },
      // The same again with another local call after the failed one.
      { tool_calls: [{ name: 'get_current_time', arguments: { timezone: 'US_CET' } }, { name: 'get_current_time', arguments: { timezone: 'UTC' } }] },
      { content: 'Done. HARNESS_OK' },
    ],
  };
  const r = await h.finish(sessionId, scriptedConfig(script, {}, DEFAULT_POLICY), 'what time is it, and which files are there?');
  expect(r.terminated_by).toBe('final_answer');
  server = await startConsole(
    { harness: new HarnessClient(h.client, { taskQueue: h.taskQueue }), home: h.home, env: { DATABASE_URL: TEST_DATABASE_URL }, taskQueue: h.taskQueue, namespace: 'default' },
    { host: '127.0.0.1', port: 0, token: TOKEN },
  );
}, 180_000);
afterAll(async () => {
  await server?.close();
  await h?.stop();
  removeTempDirs();
});

/** The tool calls of a trace's spans, in order. */
const toolCalls = (spans: ShownSpan[]) => spans.filter((s) => s.type === 'tool_call');

/** What every view must say of the four calls. */
function expectPaired(calls: ShownSpan[]): void {
  expect(calls.map((c) => c.name)).toEqual(['get_current_time', 'list_files', 'get_current_time', 'get_current_time']);
  const [badZone, list, badAgain, utc] = calls;
  for (const bad of [badZone!, badAgain!]) {
    expect(bad.status).toBe('error');
    expect(bad.output).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
    expect(bad.error).toMatch(/US_CET/);
  }
  expect(list!.status).toBe('ok');
  expect(list!.error).toBeNull();
  expect(list!.output).toMatchObject({ ok: true });
  expect(JSON.stringify(list!.output)).not.toMatch(/US_CET|time zone/);
  expect(utc!.status).toBe('ok');
  expect(utc!.output).toMatchObject({ ok: true, result: { timezone: 'UTC' } });
}

describe('trace after a local call that failed its argument check', () => {
  it('`harness trace --json` gives each call its own result', async () => {
    const r = await runCli(['trace', sessionId, '--json'], { env, timeoutMs: 60_000 });
    expect(r.code, describeResult(r)).toBe(0);
    const spans = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as ShownSpan);
    expectPaired(toolCalls(spans));
  });

  it('`harness trace` text shows list_files ok and the time zone error only on its own call', async () => {
    const r = await runCli(['trace', sessionId], { env, timeoutMs: 60_000 });
    expect(r.code, describeResult(r)).toBe(0);
    const tools = r.stdout.split('\n').filter((l) => /^\s*tool /.test(l));
    expect(tools).toHaveLength(4);
    expect(tools[0]).toMatch(/get_current_time .*INVALID_ARGUMENTS.*US_CET/);
    expect(tools[1]).toMatch(/list_files .* ok\b/);
    expect(tools[1]).not.toMatch(/INVALID_ARGUMENTS|US_CET/);
    expect(tools[2]).toMatch(/get_current_time .*INVALID_ARGUMENTS/);
    expect(tools[3]).toMatch(/get_current_time .*UTC.* ok\b/);
    expect(tools[3]).not.toMatch(/INVALID_ARGUMENTS/);
  });

  it("the console's trace data gives each call its own result", async () => {
    const res = await fetch(`${server.base}/api/trace?id=${encodeURIComponent(sessionId)}`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { spans: ShownSpan[] };
    expectPaired(toolCalls(body.spans));
  });

  it('the OTLP spans give each call its own result and error type', async () => {
    const trace = await new HarnessClient(h.client).trace(sessionId);
    const otel = toOtelSpans(
      trace.spans.map((s) => s.span),
      traceResource({}),
    ).filter((s) => s.attributes['harness.span.type'] === 'tool_call');
    expect(otel.map((s) => s.attributes['tool.name'])).toEqual(['get_current_time', 'list_files', 'get_current_time', 'get_current_time']);
    const output = (i: number) => JSON.parse(String(otel[i]!.attributes['output.value'])) as Record<string, unknown>;
    expect(otel[0]!.attributes['error.type']).toBe('INVALID_ARGUMENTS');
    expect(otel[1]!.attributes['error.type']).toBeUndefined();
    expect(otel[1]!.attributes['harness.status']).toBe('ok');
    expect(output(1)).toMatchObject({ ok: true });
    expect(otel[2]!.attributes['error.type']).toBe('INVALID_ARGUMENTS');
    expect(otel[3]!.attributes['error.type']).toBeUndefined();
    expect(output(3)).toMatchObject({ ok: true, result: { timezone: 'UTC' } });
  });
});
