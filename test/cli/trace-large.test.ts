/**
 * A turn whose history is larger than a gRPC message of grpc-js's default limit (4 MB), read in
 * one request: whoever may signal a workflow can add payloads of up to 2 MB each to its history
 * (Temporal records a signal before the workflow sees it), as an MCP server re-listing a large
 * tool list after every call did. `harness trace` (text, --json, --full, --follow), `harness
 * cost`, the console's trace endpoint and `harness dev`'s OTLP export read it whole.
 */
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideApprovals, sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { newSessionId, scriptedConfig, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, removeTempDirs, runCli, stackLines, tempDir } from '../support/cli';
import { exportUntilSent, productionClient, startReceiver, startTraceConsole } from '../support/trace-readers';

/** Four signals of 1.5 MB: 6 MB of history in one turn, each payload under Temporal's 2 MB limit. */
const PADDING = Array.from({ length: 4 }, (_, i) => `PADDING-${i}-${'x'.repeat(1_500_000)}`);

let h: TestHarness;
let client: Client;
let env: NodeJS.ProcessEnv;
let home: string;
const sessionId = newSessionId('large-history');
const turnId = `${sessionId}/turn-1`;
const cli = (args: string[], extra: Record<string, string> = {}) => runCli(args, { env: { ...env, ...extra }, timeoutMs: 90_000 });

beforeAll(async () => {
  h = await startHarness();
  client = await productionClient(h);
  home = tempDir('harness-trace-large-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(home, 'home') });
  // Under the default policy the write asks: the turn waits while the signals come in.
  const script = { steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a\n' } }] }, { content: 'Written. HARNESS_OK' }, { content: 'Second. HARNESS_OK' }] };
  const config = scriptedConfig(script);
  await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'write a.txt' });
  const waiting = await waitForTurn(h.client, turnId, { pollMs: 100 });
  if (waiting.kind !== 'waiting' || waiting.state.pending?.kind !== 'approvals') throw new Error(`the turn does not wait for an approval: ${JSON.stringify(waiting)}`);
  for (const text of PADDING) await h.client.workflow.getHandle(turnId).signal('padding', text);
  await decideApprovals(h.client, sessionId, { calls: waiting.state.pending.calls.map((c) => ({ callId: c.callId, digest: c.digest ?? '' })), approve: true });
  const done = await waitForTurn(h.client, turnId, { pollMs: 100 });
  expect(done.kind === 'done' && done.result.terminated_by).toBe('final_answer');
  expect((await h.client.workflow.getHandle(turnId).describe()).historySize).toBeGreaterThan(6_000_000);
  // A second, ordinary turn: the session's trace holds both.
  expect((await h.finish(sessionId, config, 'and again')).answer).toBe('Second. HARNESS_OK');
}, 180_000);
afterAll(async () => {
  await client?.connection.close();
  await h?.stop();
  removeTempDirs();
});

describe('readers of a turn whose history is over 4 MB', () => {
  it('harness trace reads it: text, --json and --full, of the turn and of its session', async () => {
    const text = await cli(['trace', turnId]);
    expect(text.code, describeResult(text)).toBe(0);
    expect(text.stderr).toBe('');
    expect(text.stdout).toMatch(/approval approved by /);
    expect(text.stdout).toContain('answer: Written. HARNESS_OK');

    const json = await cli(['trace', sessionId, '--json']);
    expect(json.code, describeResult(json)).toBe(0);
    const spans = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; name: string; status: string });
    expect(spans.filter((s) => s.type === 'turn').map((s) => [s.name, s.status])).toEqual([
      [turnId, 'ok'],
      [`${sessionId}/turn-2`, 'ok'],
    ]);

    const full = await cli(['trace', turnId, '--full'], { DATABASE_URL: TEST_DATABASE_URL });
    expect(full.code, describeResult(full)).toBe(0);
    expect(full.stderr).toBe('');
    expect(full.stdout).toContain('[user]: write a.txt');
  });

  it('harness trace --follow of the closed turn prints it and says it has closed', async () => {
    const r = await cli(['trace', turnId, '--follow']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(stackLines(r.stderr)).toEqual([]);
    expect(r.stdout).toContain('answer: Written. HARNESS_OK');
    expect(r.stderr).toContain(`${turnId} has closed`);
  });

  it('harness cost reads it: the turn from every event, the session from its turns', async () => {
    for (const args of [['cost', turnId, '--calls', '--json'], ['cost', sessionId, '--json']]) {
      const r = await cli(args);
      expect(r.code, describeResult(r)).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ notes: [] });
    }
  });

  it('the console\'s trace endpoint and the session view\'s live stream give the session\'s spans', async () => {
    const console = await startTraceConsole(h, client);
    try {
      const r = await console.trace(sessionId);
      expect(r.status, r.body.slice(0, 500)).toBe(200);
      const body = JSON.parse(r.body) as { spans: { type: string }[]; notes: string[] };
      expect(body.spans.filter((s) => s.type === 'turn')).toHaveLength(2);
      expect(body.notes).toEqual([]);
      const live = await console.events(turnId);
      expect(live).toMatch(/event: closed\n/);
      expect(live).toContain('Written. HARNESS_OK');
    } finally {
      await console.close();
    }
  });

  it('harness dev\'s OTLP export sends the turn', async () => {
    const receiver = await startReceiver();
    try {
      const r = await exportUntilSent(h, client, receiver.url, home, turnId);
      expect(r.error).toBeUndefined();
      expect(r.exported.map((t) => t.turnId)).toContain(turnId);
    } finally {
      await receiver.close();
    }
  });
});
