/**
 * `harness sessions` shows each session's own state, read from history (under the default
 * policy): idle after a turn, running at step N, waiting for approval, waiting for an answer,
 * ended; with turns, tokens, the last task and its age; `--state` filters.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, tempDir } from '../support/cli';
import { endSession, sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';

let h: TestHarness;
const suiteStartedAt = Date.now();
let env: NodeJS.ProcessEnv;
const ids = { idle: newSessionId('st-idle'), running: newSessionId('st-run'), approval: newSessionId('st-appr'), question: newSessionId('st-ask'), ended: newSessionId('st-end') };

async function start(sessionId: string, steps: unknown[], text: string) {
  const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config: scriptedConfig({ steps }, {}, DEFAULT_POLICY), text });
  return turnId;
}

beforeAll(async () => {
  h = await startHarness();
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(tempDir('harness-cli-states-'), 'home') });
  const time = { tool_calls: [{ name: 'get_current_time', arguments: {} }] };
  await waitForTurn(h.client, await start(ids.idle, [time, { content: 'done' }], 'tell the time'), { pollMs: 100 });
  await waitForTurn(h.client, await start(ids.ended, [{ content: 'bye' }], 'say bye'), { pollMs: 100 });
  await endSession(h.client, ids.ended);
  await waitForTurn(h.client, await start(ids.approval, [{ tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }] }, { content: 'ok' }], 'write a'), { pollMs: 100 });
  await waitForTurn(h.client, await start(ids.question, [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which one?' } }] }, { content: 'ok' }], 'ask me'), { pollMs: 100 });
  // Step 2's model call takes ten minutes: the session runs at step 2 while the test looks.
  await start(ids.running, [time, { fault: { delay_ms: 600_000 }, content: 'late' }], 'take your time');
  for (let i = 0; i < 100; i++) {
    const state = await h.client.workflow.getHandle(`${ids.running}/turn-1`).query<{ step: number }>('turnState');
    if (state.step === 2) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}, 120_000);
afterAll(async () => {
  await h?.client.workflow.getHandle(ids.running).terminate('test over').catch(() => undefined);
  await h?.stop();
  removeTempDirs();
});

describe('harness sessions', () => {
  it('gives each session its own state, turns, tokens, last task and age', async () => {
    const r = await runCli(['sessions', '--json', '--limit', '1000'], { env });
    expect(r.code, describeResult(r)).toBe(0);
    const rows = parseJson<{ session_id: string; state: string; step?: number; turns: number; usage: { total_tokens: number }; last_task?: string; pending?: { kind: string }; last_activity_at: string }[]>(r);
    const of = (id: string) => rows.find((x) => x.session_id === id)!;
    expect(of(ids.idle)).toMatchObject({ state: 'idle', turns: 1, last_task: 'tell the time' });
    expect(of(ids.idle).usage.total_tokens).toBeGreaterThan(0);
    expect(of(ids.running)).toMatchObject({ state: 'running', step: 2, turns: 1, last_task: 'take your time' });
    expect(of(ids.approval)).toMatchObject({ state: 'waiting_for_approval', pending: { kind: 'approvals' }, last_task: 'write a' });
    expect(of(ids.question)).toMatchObject({ state: 'waiting_for_user', pending: { kind: 'question' } });
    expect(of(ids.ended)).toMatchObject({ state: 'ended', turns: 1, last_task: 'say bye' });
    expect(Date.parse(of(ids.idle).last_activity_at)).toBeGreaterThanOrEqual(suiteStartedAt);
    expect(Date.parse(of(ids.idle).last_activity_at)).toBeLessThanOrEqual(Date.now());

    const text = await runCli(['sessions', '--limit', '1000'], { env });
    expect(text.code, describeResult(text)).toBe(0);
    const line = (id: string) => text.stdout.split('\n').find((l) => l.startsWith(id)) ?? '';
    expect(line(ids.running)).toMatch(/\trunning step 2\t1 turn\(s\)\t\d+ tokens\t\d+ s ago\ttake your time$/);
    expect(line(ids.approval)).toMatch(/\twaiting for approval\t/);
    expect(line(ids.question)).toMatch(/\twaiting for user\t/);
    expect(line(ids.ended)).toMatch(/\tended\t/);
  });

  it('--state filters: waiting, running, closed', async () => {
    const listed = async (state: string) => parseJson<{ session_id: string }[]>(await runCli(['sessions', '--json', '--limit', '1000', '--state', state], { env })).map((x) => x.session_id);
    const waiting = await listed('waiting');
    expect(waiting).toEqual(expect.arrayContaining([ids.approval, ids.question]));
    expect(waiting).not.toContain(ids.idle);
    expect(await listed('running')).toContain(ids.running);
    const closed = await listed('closed');
    expect(closed).toContain(ids.ended);
    expect(closed).not.toContain(ids.running);
    const bad = await runCli(['sessions', '--state', 'sleepy'], { env });
    expect(bad.code).toBe(2);
  });
});
