/**
 * A model can write tool-call arguments nested 100,000 deep. The turn refuses them (the model
 * reads INVALID_ARGUMENTS), but history keeps the call as the model wrote it, and every reader
 * of that history must still show it: `harness trace` (text, --json, --full, --follow),
 * `harness cost`, the console's trace endpoint and `harness dev`'s OTLP export, the arguments
 * shown 64 levels deep and then a visible mark.
 */
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSessionId, scriptedConfig, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, removeTempDirs, runCli, stackLines, tempDir } from '../support/cli';
import { exportUntilSent, productionClient, startReceiver, startTraceConsole } from '../support/trace-readers';

const LEVELS = 100_000;
const MARK = '[nested deeper than 64 levels]';
/** Arguments given as a string go to the harness raw (README, "Scripted model"). */
const DEEP_ARGS = `{"path":${'['.repeat(LEVELS)}${']'.repeat(LEVELS)}}`;

let h: TestHarness;
let client: Client;
let env: NodeJS.ProcessEnv;
let home: string;
const sessionId = newSessionId('deep-args');
const turnId = `${sessionId}/turn-1`;
const cli = (args: string[], extra: Record<string, string> = {}) => runCli(args, { env: { ...env, ...extra }, timeoutMs: 90_000 });

/** How deep arrays and objects nest in a value, and the strings at the bottom (iteratively: the value may be deep). */
function shape(value: unknown): { depth: number; leaves: Set<string> } {
  let depth = 0;
  const leaves = new Set<string>();
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 0 }];
  while (stack.length) {
    const { v, d } = stack.pop()!;
    if (v && typeof v === 'object') for (const c of Object.values(v)) stack.push({ v: c, d: d + 1 });
    else {
      depth = Math.max(depth, d);
      if (typeof v === 'string') leaves.add(v);
    }
  }
  return { depth, leaves };
}

beforeAll(async () => {
  h = await startHarness();
  client = await productionClient(h);
  home = tempDir('harness-trace-deep-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(home, 'home') });
  const script = { steps: [{ tool_calls: [{ name: 'read_file', arguments: DEEP_ARGS }] }, { expect: { last_message_contains: 'INVALID_ARGUMENTS' }, content: 'Flatter next time. HARNESS_OK' }] };
  const r = await h.finish(sessionId, scriptedConfig(script), 'read the deep path');
  expect(r.terminated_by).toBe('final_answer');
  expect(r.toolCalls[0]).toMatchObject({ name: 'read_file', ok: false, error_type: 'INVALID_ARGUMENTS' });
}, 120_000);
afterAll(async () => {
  await client?.connection.close();
  await h?.stop();
  removeTempDirs();
});

describe('readers of a call whose arguments nest 100,000 deep', () => {
  it('harness trace --json shows the call, its arguments cut at 64 levels with a mark', async () => {
    for (const id of [turnId, sessionId]) {
      const r = await cli(['trace', id, '--json']);
      expect(r.code, describeResult(r)).toBe(0);
      expect(r.stderr).toBe('');
      const spans = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; name: string; input: Record<string, unknown>; output: Record<string, unknown> | null });
      const call = spans.find((s) => s.type === 'tool_call')!;
      expect(call).toMatchObject({ name: 'read_file', output: { ok: false, error_type: 'INVALID_ARGUMENTS' } });
      // `{"path": [[[…` : the object is level 1, its array the second.
      expect(shape(call.input.args)).toEqual({ depth: 64, leaves: new Set([MARK]) });
      const asked = spans.find((s) => s.type === 'llm_call')!.output!.tool_calls as { arguments: unknown }[];
      expect(shape(asked[0]!.arguments).leaves).toEqual(new Set([MARK]));
    }
  });

  it('harness trace prints the story as text, --full the arguments with the mark; harness cost counts the turn', async () => {
    const text = await cli(['trace', turnId]);
    expect(text.code, describeResult(text)).toBe(0);
    expect(text.stdout).toMatch(/tool read_file \{"path":\[\[\[.*INVALID_ARGUMENTS/);
    expect(text.stdout).toContain('answer: Flatter next time. HARNESS_OK');

    const full = await cli(['trace', sessionId, '--full'], { DATABASE_URL: TEST_DATABASE_URL });
    expect(full.code, describeResult(full)).toBe(0);
    expect(full.stderr).toBe('');
    expect(full.stdout).toContain(MARK);
    expect(stackLines(full.stdout + full.stderr)).toEqual([]);

    const cost = await cli(['cost', sessionId, '--calls', '--json']);
    expect(cost.code, describeResult(cost)).toBe(0);
    expect(JSON.parse(cost.stdout)).toMatchObject({ id: sessionId, turns: [{ turn_id: turnId }] });
  });

  it('harness trace --follow of the closed turn prints it and says it has closed', async () => {
    for (const flags of [[], ['--json']]) {
      const r = await cli(['trace', turnId, '--follow', ...flags]);
      expect(r.code, describeResult(r)).toBe(0);
      expect(stackLines(r.stderr)).toEqual([]);
      expect(r.stdout).toContain(flags.length ? MARK : 'tool read_file');
    }
  });

  it('the console\'s trace endpoint and the session view\'s live stream give the spans, the arguments marked', async () => {
    const console = await startTraceConsole(h, client);
    try {
      for (const full of [false, true]) {
        const r = await console.trace(sessionId, full);
        expect(r.status, r.body.slice(0, 500)).toBe(200);
        const body = JSON.parse(r.body) as { spans: { type: string; input: Record<string, unknown> }[] };
        expect(shape(body.spans.find((s) => s.type === 'tool_call')!.input.args).leaves).toEqual(new Set([MARK]));
      }
      const live = await console.events(turnId);
      expect(live).toMatch(/event: closed\n/);
      expect(live).toContain(MARK);
    } finally {
      await console.close();
    }
  });

  it('harness dev\'s OTLP export sends the turn, the arguments marked', async () => {
    const receiver = await startReceiver();
    try {
      const r = await exportUntilSent(h, client, receiver.url, home, turnId);
      expect(r.error).toBeUndefined();
      expect(r.exported.map((t) => t.turnId)).toContain(turnId);
      expect(receiver.bodies.join('')).toContain(MARK);
    } finally {
      await receiver.close();
    }
  });
});
