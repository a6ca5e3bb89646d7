/**
 * Webhooks: a session whose config names a URL its worker declared gets a signed POST when a call
 * waits for approval and when its turn ends (a turn that throws too), delivered by a child
 * workflow that retries a receiver that is down, once per event id; a session naming a URL the
 * worker did not declare is refused.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import { decideApprovals, sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { rootCauseMessage } from '../../deterministic/errors';
import type { SessionConfig } from '../../deterministic/session-config';
import type { WebhookResult } from '../../deterministic/webhook';
import { replayHistory } from '../../history/replay/replay';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { Receiver, signedWith, type Received } from '../support/webhook-receiver';

const SECRET = 'webhook-test-secret';

let h: TestHarness;
const receivers: Receiver[] = [];

async function receiver(): Promise<Receiver> {
  const r = new Receiver();
  await r.start();
  receivers.push(r);
  h.declarations.add({ webhooks: [{ url: r.url, secret: 'env:WEBHOOK_SECRET' }] });
  return r;
}

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_SECRET: SECRET } });
});
afterAll(async () => {
  await h?.stop();
  await Promise.all(receivers.map((r) => r.stop()));
});

const writeScript = { steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'note.txt', content: 'hello from the agent' } }] }, { content: 'Written. HARNESS_OK' }] };

const signed = (r: Received): boolean => signedWith(SECRET, r);

describe('webhooks', () => {
  it('posts a signed approval event with the ids to decide by, then the turn end once decided', async () => {
    const hook = await receiver();
    const sessionId = newSessionId('hook');
    const config: SessionConfig = { ...scriptedConfig(writeScript), notify: { url: hook.url, retryInitialMs: 100 } };
    const out = await h.turn(sessionId, config, 'write a note');
    expect(out.kind).toBe('waiting');
    await expect.poll(() => hook.received.length, { timeout: 15_000, interval: 50 }).toBe(1);
    const [approval] = hook.received;
    expect(signed(approval!)).toBe(true);
    const turnId = `${sessionId}/turn-1`;
    const body = approval!.body as { kind: string; session_id: string; turn_id: string; event_id: string; calls: Array<{ call_id: string; tool: string; digest: string; risk: string; args: Array<{ name: string; value: string }> }> };
    expect(body).toMatchObject({ kind: 'approval', session_id: sessionId, turn_id: turnId });
    const call = body.calls[0]!;
    expect(body.event_id).toBe(`${turnId}/approval/${call.call_id}`);
    expect(approval!.headers['x-harness-event-id']).toBe(body.event_id);
    expect(approval!.headers['x-harness-timestamp']).toMatch(/^\d+$/);
    expect(approval!.body.occurred_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(call.tool).toBe('write_file');
    expect(call.digest).toMatch(/\S/);
    expect(call.args).toEqual([
      { name: 'path', value: '"note.txt"', clipped: false },
      { name: 'content', value: '"hello from the agent"', clipped: false },
    ]);

    // The decision goes through the existing API with the ids and digest the event carried.
    await decideApprovals(h.client, sessionId, { calls: [{ callId: call.call_id, digest: call.digest }], approve: true });
    const done = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(done.kind === 'done' && done.result.terminated_by).toBe('final_answer');
    await expect.poll(() => hook.received.length, { timeout: 15_000, interval: 50 }).toBe(2);
    const end = hook.received[1]!;
    expect(signed(end)).toBe(true);
    expect(end.body).toMatchObject({ kind: 'turn_end', event_id: `${turnId}/turn_end/end`, terminated_by: 'final_answer', answer: 'Written. HARNESS_OK', turn_id: turnId });
  });

  it('retries a receiver that is down, then delivers once, with the same event id; the attempts are in history', async () => {
    const hook = await receiver();
    hook.failFirst = 3;
    const sessionId = newSessionId('hook-down');
    const config: SessionConfig = { ...scriptedConfig({ steps: [{ content: 'Nothing to do. HARNESS_OK' }] }), notify: { url: hook.url, retryInitialMs: 50, retryMaxIntervalMs: 200 } };
    const out = await h.turn(sessionId, config, 'hello');
    expect(out.kind).toBe('done');
    const turnId = `${sessionId}/turn-1`;
    const eventId = `${turnId}/turn_end/end`;
    const delivery = h.client.workflow.getHandle(`webhook:${eventId}`);
    const result = (await delivery.result()) as WebhookResult;
    expect(result).toEqual({ eventId, status: 204, attempts: 4 });
    expect(hook.attempts).toBe(4);
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]!.headers['x-harness-event-id']).toBe(eventId);
    expect(signed(hook.received[0]!)).toBe(true);
    // The trace: the delivery's history holds the attempt that got through and the last failure before it.
    const events = (await delivery.fetchHistory()).events ?? [];
    const started = events.find((e) => e.activityTaskStartedEventAttributes)?.activityTaskStartedEventAttributes;
    expect(started?.attempt).toBe(4);
    expect(started?.lastFailure?.message).toMatch(/webhook answered 503 \(attempt 3\)/);
  });

  it('posts the turn end of a turn that fails by throwing (a permanent activity failure), failed with why', async () => {
    const hook = await receiver();
    const sessionId = newSessionId('hook-thrown');
    // A script with an unknown key fails prepareTurn (INVALID_SCRIPT) for good: the turn workflow itself fails.
    const config: SessionConfig = { ...scriptedConfig({ steps: [{ contnt: 'typo' }] }), notify: { url: hook.url, retryInitialMs: 100 } };
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'hello' });
    await expect(h.client.workflow.getHandle(turnId).result()).rejects.toBeInstanceOf(WorkflowFailedError);
    await expect.poll(() => hook.received.length, { timeout: 15_000, interval: 50 }).toBe(1);
    const end = hook.received[0]!;
    expect(signed(end)).toBe(true);
    expect(end.body).toMatchObject({ kind: 'turn_end', event_id: `${turnId}/turn_end/end`, turn_id: turnId, terminated_by: 'failed', steps: 0 });
    expect(end.body.answer).toMatch(/^The turn failed: script of session .*steps\.0/);
    // Its history (the patch's marker, the child started, the failure) replays.
    const history = await h.client.workflow.getHandle(turnId).fetchHistory();
    expect(await replayHistory(history, turnId, inject('workflowBundle'))).toEqual({ ok: true });
  });

  it('refuses a session whose input names a webhook the worker did not declare, in one line', async () => {
    const sessionId = newSessionId('hook-undeclared');
    const config: SessionConfig = { ...scriptedConfig({ steps: [{ content: 'never' }] }), notify: { url: 'http://169.254.169.254/latest/meta-data' } };
    await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'hello' }).catch(() => undefined);
    let failure: unknown;
    try {
      await h.client.workflow.getHandle(sessionId).result();
    } catch (err) {
      failure = err;
    }
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const why = rootCauseMessage(failure);
    expect(why).toMatch(/^the webhook "http:\/\/169\.254\.169\.254\/latest\/meta-data" is not declared on this worker \(it declares \d+ webhooks?\): declare it on the worker/);
    expect(why).not.toContain('\n');
  });
});
