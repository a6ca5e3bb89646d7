/**
 * `harness trace` as a user runs it: one JSON span per line with --json, the story as text,
 * --full reading stored payloads from the worker's message store (or saying in one line that it
 * cannot), and one-line errors for an id that is malformed or unknown.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, removeTempDirs, runCli, stackLines, tempDir } from '../support/cli';

let h: TestHarness;
let env: NodeJS.ProcessEnv;
const sessionId = newSessionId('cli-trace');
const turnId = `${sessionId}/turn-1`;
const cli = (args: string[], extra: Record<string, string> = {}) => runCli(['trace', ...args], { env: { ...env, ...extra }, timeoutMs: 60_000 });

beforeAll(async () => {
  h = await startHarness();
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(tempDir('harness-cli-trace-'), 'home') });
  const ws = path.join(h.home, 'workspaces', sessionId);
  mkdirSync(ws, { recursive: true });
  writeFileSync(path.join(ws, 'big.txt'), 'a line of the big file\n'.repeat(200));
  const script = {
    steps: [
      { tool_calls: [{ name: 'get_current_time', arguments: {} }, { name: 'read_file', arguments: { path: 'big.txt' } }] },
      { tool_calls: [{ name: 'read_file', arguments: { path: '../outside.txt' } }] },
      { content: 'Traced. HARNESS_OK' },
    ],
  };
  const r = await h.finish(sessionId, scriptedConfig(script), 'read the big file');
  expect(r.terminated_by).toBe('final_answer');
}, 120_000);
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('harness trace', () => {
  it('--json prints one span per line, linked turn → step → call', async () => {
    const r = await cli([sessionId, '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n');
    const spans = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const s of spans) {
      expect(Object.keys(s)).toEqual(expect.arrayContaining(['trace_id', 'session_id', 'span_id', 'parent_id', 'type', 'name', 'start', 'end', 'duration_ms', 'input', 'output', 'error']));
      expect(s.session_id).toBe(sessionId);
    }
    const byId = new Map(spans.map((s) => [s.span_id, s]));
    const parentOf = (s: Record<string, unknown>) => byId.get(s.parent_id as string)?.type;
    expect(spans.map((s) => s.type)).toEqual(['turn', 'step', 'llm_call', 'tool_call', 'tool_call', 'step', 'llm_call', 'tool_call', 'step', 'llm_call']);
    expect(spans.filter((s) => s.type === 'step').every((s) => parentOf(s) === 'turn')).toBe(true);
    expect(spans.filter((s) => s.type === 'llm_call' || s.type === 'tool_call').every((s) => parentOf(s) === 'step')).toBe(true);
    expect(spans[0]).toMatchObject({ type: 'turn', name: turnId, parent_id: null, output: { terminated_by: 'final_answer', steps: 3 } });
    // Under the default policy the path outside the workspace is denied by its rule, before the tool.
    expect(spans[7]).toMatchObject({ name: 'read_file', status: 'error', output: { error_type: 'PERMISSION_DENIED' } });
    // Without --full a large result is its verdict and the hash of the stored message.
    expect(spans[4]).toMatchObject({ name: 'read_file', status: 'ok', output: { ok: true, stored: { ref: expect.any(String) } } });
  });

  it('prints the story of a turn as text; --full reads stored payloads from the worker\'s store', async () => {
    const r = await cli([turnId]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toContain(`turn ${turnId}  ok · final_answer · 3 steps`);
    expect(r.stdout).toMatch(/step 1 .*\n\s+model scripted {2}1 attempt .*→ get_current_time, read_file/);
    expect(r.stdout).toMatch(/tool read_file \{"path":"\.\.\/outside\.txt"\} {2}deny \(deny-outside-workspace\) {2}PERMISSION_DENIED: /);
    expect(r.stdout).not.toContain('a line of the big file');

    const full = await cli([turnId, '--full'], { DATABASE_URL: TEST_DATABASE_URL });
    expect(full.code, describeResult(full)).toBe(0);
    expect(full.stderr).toBe('');
    expect(full.stdout).toContain('[user]: read the big file');
    expect(full.stdout).toContain('a line of the big file');
  });

  it('--full without the worker\'s store says so in one line and shows what history holds', async () => {
    const r = await cli([turnId, '--full', '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.errLines).toHaveLength(1);
    expect(r.errLines[0]).toMatch(/^note: the message store cannot be read \(no message store at .*pgdata/);
    expect(r.stdout.trim().split('\n').map((l) => JSON.parse(l).type)).toContain('tool_call');
  });

  it('a malformed id is a usage error (exit 2); an unknown one an error with a hint (exit 1)', async () => {
    const bad = await cli(['not a/valid id!']);
    expect(bad.code, describeResult(bad)).toBe(2);
    expect(bad.errLines[0]).toMatch(/^error: .*session id.*turn id/);
    for (const id of ['no-such-session-here', 'no-such-session-here/turn-2']) {
      const r = await cli([id]);
      expect(r.code, describeResult(r)).toBe(1);
      expect(r.errLines[0]).toBe(`error: no session or turn ${id} in Temporal`);
      expect(r.errLines[1]).toMatch(/^hint: `harness sessions` lists sessions/);
      expect(stackLines(r.stderr)).toEqual([]);
      expect(r.stdout).toBe('');
    }
  });

  it('under the default policy: the asked call, its approval (who) and the denied call are in the story', async () => {
    const id = newSessionId('cli-trace-default');
    const script = {
      steps: [
        { tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a\n' } }] },
        { tool_calls: [{ name: 'read_file', arguments: { path: '../outside.txt' } }] },
        { content: 'Done. HARNESS_OK' },
      ],
    };
    const done = await h.finishApproving(id, scriptedConfig(script, {}, DEFAULT_POLICY), 'write a.txt');
    expect(done.asked).toHaveLength(1);
    const r = await cli([done.turnId]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(/approval approved by \S+ at /);
    expect(r.stdout).toContain('PERMISSION_DENIED');
    const spans = (await cli([done.turnId, '--json'])).stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; output: Record<string, unknown> | null });
    expect(spans.find((s) => s.type === 'approval')?.output).toMatchObject({ approved: true, by: expect.stringMatching(/^harness-cli |@/) });
  });
});
