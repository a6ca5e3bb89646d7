/**
 * A background sub-agent outlives its worker: the parent turn has ended and the child waits for
 * approval at the session when the worker stops; a new worker on the queue takes the session and
 * the child up again from their histories, the approval is decided there, the child's tool runs
 * once, and its end reaches the session once, as the session's next turn.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, inject, it } from 'vitest';
import { defineAgent } from '../../index';
import { HarnessClient } from '../../api/client';
import type { TurnResult } from '../../deterministic/session';
import type { SessionState } from '../../deterministic/session-state';
import { replayHistory } from '../../history/replay/replay';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { factTools } from '../support/fact-tools';

// file_note's runs are 'file_note <note>' (test/support/fact-tools.ts).
const { runs: filed, file } = factTools();
const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-background-restart-'));
const harnesses: TestHarness[] = [];
afterAll(async () => {
  for (const h of harnesses.reverse()) await h.stop().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

function scriptFile(steps: unknown[]): string {
  const f = path.join(dir, `${newSessionId('script')}.json`);
  writeFileSync(f, JSON.stringify({ steps }));
  return `scripted:${f}`;
}

const clerk = defineAgent({
  name: 'rs-clerk',
  instructions: 'You file notes.',
  model: scriptFile([{ tool_calls: [{ name: 'file_note', arguments: { note: 'r-1' } }] }, { content: 'Filed r-1.' }]),
  tools: [file],
});
const lead = defineAgent({
  name: 'rs-lead',
  instructions: 'You delegate.',
  model: scriptFile([
    { tool_calls: [{ name: 'agent__rs-clerk', arguments: { task: 'File r-1.' } }] },
    { content: 'Started it.' },
    { expect: { last_message_contains: 'Filed r-1.' }, content: 'The clerk filed r-1.' },
  ]),
  agents: [{ agent: clerk, background: true }],
});

async function harness(taskQueue?: string): Promise<{ h: TestHarness; client: HarnessClient }> {
  const h = await startHarness({ tools: [file], ...(taskQueue ? { taskQueue } : {}) });
  harnesses.push(h);
  h.declarations.add({ agents: [lead.spec, clerk.spec] });
  return { h, client: new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {}, cwd: dir }) };
}

it("a background child waiting at the session is finished by a new worker, and its end is the session's next turn, once", async () => {
  const first = await harness();
  const out = await first.client.run('File it.', { agent: 'rs-lead' });
  expect(out.kind === 'done' && out.result.answer).toBe('Started it.');
  const state = (c: HarnessClient) => c.temporal.workflow.getHandle(out.sessionId).query<SessionState>('state');
  await expect.poll(async () => (await state(first.client)).status, { timeout: 30_000, interval: 100 }).toBe('waiting_for_approval');
  await first.h.stop();
  harnesses.splice(harnesses.indexOf(first.h), 1);

  const second = await harness(first.h.taskQueue);
  await second.client.approve(out.sessionId);
  const turn2 = `${out.sessionId}/turn-2`;
  await expect.poll(async () => (await state(second.client)).turnCount, { timeout: 60_000, interval: 200 }).toBe(2);
  const r = (await second.h.client.workflow.getHandle(turn2).result()) as TurnResult;
  expect(r.answer).toBe('The clerk filed r-1.');
  expect(filed).toEqual(['file_note r-1']);
  const childId = `${out.turnId}/agent-t1-s1-c0`;
  const child = second.h.client.workflow.getHandle(childId);
  expect(((await child.result()) as TurnResult).answer).toBe('Filed r-1.');
  // One end signalled by the child, one taken by the session.
  const sent = (await child.fetchHistory()).events!.filter((e) => e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'backgroundResult');
  const got = (await second.h.client.workflow.getHandle(out.sessionId).fetchHistory()).events!.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'backgroundResult');
  expect([sent.length, got.length]).toEqual([1, 1]);
  await second.client.end(out.sessionId);
  for (const id of [out.turnId, childId, turn2, out.sessionId]) {
    const history = await second.h.client.workflow.getHandle(id).fetchHistory();
    expect(await replayHistory(history, id, inject('workflowBundle'))).toEqual({ ok: true });
  }
}, 120_000);
