/**
 * Histories larger than one gRPC message of the client: read in pages that shrink until they
 * fit, so the trace and the ledger get every event; an event larger than the message limit by
 * itself is one line naming the turn and the event's size, and a session's other turns are
 * still traced and counted. (Temporal pages by the batches it wrote events in, so "an event"
 * is an event with those written along with it.) The client here takes 256 KB messages, so histories of a few hundred
 * kilobytes (signals, which Temporal records whoever sends them) stand for the 4 MB and 128 MB
 * limits of real clients.
 */
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decideApprovals, sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { observingInterceptors } from '../../client/grpc-status';
import { loadLedger } from '../../history/ledger/load';
import { loadTrace } from '../../history/trace';
import { UserError } from '../../machine/errors';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

const LIMIT = 256 * 1024;

let h: TestHarness;
let small: Client;

/**
 * Sends a signal once the turn has handled the one before: Temporal writes signals that come
 * while a workflow task runs in one batch with it, and pages a history by those batches.
 */
async function signalAlone(turnId: string, text: string): Promise<void> {
  const handle = h.client.workflow.getHandle(turnId);
  const before = (await handle.describe()).historyLength;
  await handle.signal('padding', text);
  // The signal, and the workflow task it brings: scheduled, started, completed.
  await expect.poll(async () => (await handle.describe()).historyLength, { timeout: 20_000 }).toBeGreaterThanOrEqual(before + 4);
}

/** A session whose first turn took `signals` while it waited for an approval, and a second, ordinary turn. */
async function sessionWithSignals(signals: string[]): Promise<{ sessionId: string; turnId: string }> {
  const sessionId = newSessionId('pages');
  const turnId = `${sessionId}/turn-1`;
  const script = { steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a\n' } }] }, { content: 'Written. HARNESS_OK' }, { content: 'Second. HARNESS_OK' }] };
  const config = scriptedConfig(script);
  await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'write a.txt' });
  const waiting = await waitForTurn(h.client, turnId, { pollMs: 100 });
  if (waiting.kind !== 'waiting' || waiting.state.pending?.kind !== 'approvals') throw new Error('the turn does not wait for an approval');
  for (const s of signals) await signalAlone(turnId, s);
  await decideApprovals(h.client, sessionId, { calls: waiting.state.pending.calls.map((c) => ({ callId: c.callId, digest: c.digest ?? '' })), approve: true });
  expect((await waitForTurn(h.client, turnId, { pollMs: 100 })).kind).toBe('done');
  expect((await h.finish(sessionId, config, 'and again')).answer).toBe('Second. HARNESS_OK');
  return { sessionId, turnId };
}

beforeAll(async () => {
  h = await startHarness();
  const observing = observingInterceptors();
  const connection = await Connection.connect({ address: h.address, channelArgs: { 'grpc.max_receive_message_length': LIMIT }, interceptors: observing.interceptors });
  observing.bind(connection);
  small = new Client({ connection, namespace: 'default' });
});
afterAll(async () => {
  await small?.connection.close();
  await h?.stop();
});

describe('histories over the client\'s message limit', () => {
  it('a history of many events over the limit is read whole, in pages: the trace and the ledger are those of a client that takes it at once', async () => {
    const { sessionId, turnId } = await sessionWithSignals(Array.from({ length: 8 }, (_, i) => `PAD-${i}-${'x'.repeat(100_000)}`));
    expect((await h.client.workflow.getHandle(turnId).describe()).historySize).toBeGreaterThan(3 * LIMIT);
    for (const id of [turnId, sessionId]) {
      const [paged, whole] = await Promise.all([loadTrace(small, id), loadTrace(h.client, id)]);
      expect(paged.notes).toEqual([]);
      expect(paged.spans.map((s) => s.span)).toEqual(whole.spans.map((s) => s.span));
      expect(await loadLedger(small, id, { calls: true })).toEqual(await loadLedger(h.client, id, { calls: true }));
    }
  }, 120_000);

  it('an event over the limit by itself: the turn is one line naming it and the size; its session is traced and counted without it, with a note', async () => {
    const { sessionId, turnId } = await sessionWithSignals([`BIG-${'y'.repeat(400_000)}`]);
    const err = await loadTrace(small, turnId).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UserError);
    const message = (err as UserError).message;
    expect(message).toMatch(new RegExp(`^${turnId}: Temporal sends 39\\d KB of its history in one piece \\(an event and those written with it\\), more than the 256 KB its client takes in one message$`));
    expect((err as UserError).hint).not.toContain('\n');

    const trace = await loadTrace(small, sessionId);
    expect(trace.notes).toEqual([`${message}; not shown`]);
    expect(trace.spans.filter((s) => s.span.type === 'turn').map((s) => s.span.name)).toEqual([`${sessionId}/turn-2`]);
    const ledger = await loadLedger(small, sessionId, { calls: true });
    expect(ledger.notes).toEqual([`${message}; not counted`]);
    expect(ledger.turns.map((t) => t.turnId)).toEqual([`${sessionId}/turn-2`]);
  }, 120_000);
});
