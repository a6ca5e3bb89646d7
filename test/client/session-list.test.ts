/**
 * `harness sessions` reads each session's latest task from the session's own history, where the
 * turn's start carries its input: no history call to the turn itself (a call a row, most of a
 * listing's cost past its start-up). The row's task is what the turn's own start says.
 */
import { Client } from '@temporalio/client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listSessions } from '../../client/session-list';
import { sessionState } from '../../client/session-client';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

/** A client like h.client whose history reads are recorded: the workflow id of each. */
function countingClient(reads: string[]): Client {
  const service = h.client.workflowService;
  const counted = new Proxy(service, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (req: { execution?: { workflowId?: string } }, ...rest: unknown[]) => {
        if (String(prop).startsWith('getWorkflowExecutionHistory')) reads.push(req.execution?.workflowId ?? '');
        return (value as (...a: unknown[]) => unknown).call(target, req, ...rest);
      };
    },
  });
  return new Client({ connection: Object.assign(Object.create(h.client.connection) as object, { workflowService: counted }) as Client['connection'] });
}

it("lists a session's latest task without reading its turn's history", async () => {
  const sessionId = newSessionId('list');
  const long = `Summarize the notes ${'x'.repeat(300)}`;
  const config = scriptedConfig({ steps: [{ content: 'first done' }, { content: 'second done' }] });
  await h.finish(sessionId, config, 'The first task');
  // The session takes the next message once it has recorded the first turn's result.
  await expect.poll(async () => (await sessionState(h.client, sessionId)).status, { timeout: 10_000, interval: 50 }).toBe('idle');
  await h.finish(sessionId, config, long);
  const reads: string[] = [];
  const rows = await listSessions(countingClient(reads), { limit: 50, taskQueue: h.taskQueue });
  const row = rows.find((r) => r.session_id === sessionId);
  expect(row?.last_task).toBe(`${long.slice(0, 200)}…`);
  expect(row?.turns).toBe(2);
  expect(reads).toContain(sessionId);
  expect(reads.filter((id) => id.startsWith(`${sessionId}/`))).toEqual([]);
});
