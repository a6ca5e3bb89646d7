/**
 * A turn sleeping in a `wait` call outlives its worker: the worker stops while the turn sleeps
 * (the timer is the server's), a new worker on the queue takes the turn up again by replaying its
 * history (the `wait-tool` marker, the sleep, the wake), `status` shows it sleeping throughout
 * (read from history while no worker answers), and a wake ends the wait so the turn goes on to
 * its answer.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { connectHarness } from '../../index';
import type { TurnResult } from '../../deterministic/session';
import type { SessionState } from '../../deterministic/session-state';
import { sendMessage, sessionState } from '../../client/session-client';
import { wakeSession } from '../../client/wake-client';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

const harnesses: TestHarness[] = [];
afterAll(async () => {
  for (const h of harnesses.reverse()) await h.stop().catch(() => undefined);
});

describe('wait across a worker restart', () => {
  it('a sleeping turn is woken after its worker was replaced, and goes on', async () => {
    const first = await startHarness();
    harnesses.push(first);
    const sessionId = newSessionId('wait-restart');
    const config = scriptedConfig({
      steps: [
        { tool_calls: [{ name: 'wait', arguments: { seconds: 3600, reason: 'the worker to be replaced' } }] },
        { expect: { last_message_contains: 'new worker is up' }, content: 'Back after the restart. DONE' },
      ],
    });
    first.declareUsed(config);
    const { turnId } = await sendMessage(first.client, { taskQueue: first.taskQueue, sessionId, config, text: 'sleep through a restart' });
    await expect.poll(async () => (await sessionState(first.client, sessionId)).sleeping, { timeout: 20_000, interval: 100 }).toBeDefined();
    const before = (await sessionState(first.client, sessionId)).sleeping!;
    await first.stop();
    harnesses.splice(harnesses.indexOf(first), 1);

    // No worker: status reads the session's history, which names the sleep too.
    const home = mkdtempSync(path.join(os.tmpdir(), 'harness-wait-restart-'));
    const outside = await connectHarness({ env: { TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: home }, taskQueue: first.taskQueue, cwd: home });
    try {
      const view = await outside.status(sessionId);
      expect(view.detailsMissing).toBeDefined();
      expect(view).toMatchObject({ status: 'running', sleeping: before });
    } finally {
      await outside.close();
    }

    const second = await startHarness({ taskQueue: first.taskQueue });
    harnesses.push(second);
    second.declareUsed(config);
    // The new worker replays the session and the turn from their histories: still sleeping, same wait.
    const state: SessionState = await sessionState(second.client, sessionId);
    expect(state.sleeping).toEqual(before);
    const woken = await wakeSession(second.client, sessionId, { reason: 'the new worker is up', by: 'restart-test' });
    expect(woken).toEqual({ turnId, sleeping: before });

    const r = (await second.client.workflow.getHandle(turnId).result()) as TurnResult;
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('Back after the restart. DONE');
    expect(r.toolCalls).toEqual([expect.objectContaining({ name: 'wait', ok: true })]);
  });
});
