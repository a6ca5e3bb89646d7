/**
 * A background sub-agent's end survives the loss of the worker that was taking it: a real worker
 * process (test/support/background-worker.cjs, built from the package) runs the session, the
 * lead's turn and the background child; the child ends and signals its end; the session's
 * workflow task that takes it (and starts the follow-up turn) is done by that worker, which is
 * SIGKILLed before the server hears of it (a proxy holds the report back). A new worker takes
 * the session up from history: the end reaches the session once, one follow-up turn runs, and no
 * tool's side effect happens twice.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { connectHarness, type HarnessClient } from '../../index';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import { decodePayload } from '../../history/trace/events';
import { replayHistory } from '../../history/replay/replay';
import { cliEnv } from '../support/cli';
import { adoptHome } from '../../machine/home-mark';
import { TEST_DATABASE_URL } from '../support/harness';
import { kill, ROOT, spawnReady, until } from '../support/processes';
import { startHoldProxy, type HoldProxy } from '../support/grpc-hold-proxy';

const FIXTURE = path.join(ROOT, 'test', 'support', 'background-worker.cjs');
const workers: ChildProcess[] = [];
let client: HarnessClient;
let env: NodeJS.ProcessEnv;
let home: string;
let proxy: HoldProxy;

function script(steps: unknown[]): string {
  const file = path.join(home, `script-${randomUUID()}.json`);
  writeFileSync(file, JSON.stringify({ steps }));
  return file;
}

async function startWorker(address: string): Promise<ChildProcess> {
  const child = await spawnReady([FIXTURE], { env: { ...env, TEMPORAL_ADDRESS: address }, cwd: ROOT });
  workers.push(child);
  return child;
}

beforeAll(async () => {
  home = mkdtempSync(path.join(os.tmpdir(), 'harness-background-crash-'));
  adoptHome(home);
  proxy = await startHoldProxy(inject('temporalAddress'));
  env = cliEnv({
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    HARNESS_TASK_QUEUE: `background-crash-${randomUUID()}`,
    HARNESS_HOME: home,
    DATABASE_URL: TEST_DATABASE_URL,
    LEAD_SCRIPT: script([
      { tool_calls: [{ name: 'agent__researcher', arguments: { task: 'Note the tide.' } }] },
      { content: 'Started it.' },
      { expect: { last_message_contains: 'Tide noted.' }, tool_calls: [{ name: 'note_fact', arguments: { fact: 'follow-up' } }] },
      { content: 'Follow-up noted. DONE' },
    ]),
    RESEARCHER_SCRIPT: script([
      // A moment's delay: the proxy is set to catch the follow-up turn's start before it can happen.
      { fault: { delay_ms: 1000, times: 1 }, tool_calls: [{ name: 'note_fact', arguments: { fact: 'tide' } }] },
      { content: 'Tide noted.' },
    ]),
  });
  client = await connectHarness({ env, cwd: home });
});

afterAll(async () => {
  for (const w of workers) await kill(w, 'SIGKILL');
  await client?.close();
  await proxy?.close();
});

it("killed after a background child's end and before the session took it: the end is taken once, one follow-up turn, no effect twice", async () => {
  const first = await startWorker(proxy.address);
  const sent = await client.send('Have the tide noted.', { agent: 'lead' });
  const turn2 = `${sent.sessionId}/turn-2`;
  // The session's workflow task that starts turn 2 (it took the child's end) is done, and never reported.
  const caught = proxy.holdFirst(/RespondWorkflowTaskCompleted$/, turn2);
  const first1 = await client.wait(sent.turnId, { timeoutMs: 60_000 });
  expect(first1.kind === 'done' && first1.result.answer).toBe('Started it.');
  await caught;
  const childId = `${sent.turnId}/agent-t1-s1-c0`;
  const child = client.temporal.workflow.getHandle(childId);
  expect(((await child.result()) as TurnResult).answer).toBe('Tide noted.');
  await kill(first, 'SIGKILL');
  // The session has the child's end in its history and no turn 2 yet.
  const session = client.temporal.workflow.getHandle(sent.sessionId);
  const before = (await session.fetchHistory()).events ?? [];
  expect(before.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'backgroundResult')).toHaveLength(1);
  expect(before.some((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId === turn2)).toBe(false);

  await startWorker(inject('temporalAddress'));
  await until('turn 2', () => client.temporal.workflow.getHandle(turn2).describe().then(() => true, () => false));
  const r = (await client.temporal.workflow.getHandle(turn2).result()) as TurnResult;
  expect(r.answer).toBe('Follow-up noted. DONE');
  const input = decodePayload((await client.temporal.workflow.getHandle(turn2).fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]) as TurnInput;
  expect(input.userMessage).toMatch(/\[background sub-agent lead › researcher .*\] answered:\nTide noted\.$/);
  await client.end(sent.sessionId);
  await until('the session to close', async () => (await session.describe()).status.name === 'COMPLETED');

  // Each tool's effect once: the child's by the killed worker, the follow-up's by the new one.
  const notes = readFileSync(path.join(home, 'workspaces', sent.sessionId, 'notes.txt'), 'utf8').trim().split('\n');
  expect(notes).toEqual([`t1-s1-c0 tide pid ${first.pid}`, expect.stringMatching(/^t2-s1-c0 follow-up pid \d+$/)]);
  expect(notes[1]).not.toContain(`pid ${first.pid}`);
  // One end sent, one taken; one follow-up turn, started once; the lost task timed out, as a crash does.
  const events = (await session.fetchHistory()).events ?? [];
  const sentEnds = ((await child.fetchHistory()).events ?? []).filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'backgroundResult');
  const gotEnds = events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'backgroundResult');
  const turns = events.map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId).filter((id) => id !== undefined);
  expect([sentEnds.length, gotEnds.length, turns]).toEqual([1, 1, [sent.turnId, turn2]]);
  expect(events.some((e) => e.workflowTaskTimedOutEventAttributes)).toBe(true);
  for (const id of [sent.turnId, childId, turn2, sent.sessionId]) {
    const history = await client.temporal.workflow.getHandle(id).fetchHistory();
    expect(await replayHistory(history, id, inject('workflowBundle'))).toEqual({ ok: true });
  }
}, 150_000);
