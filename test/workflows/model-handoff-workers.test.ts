/**
 * A model call handed on from its local activity is sent once, however many workers poll: two
 * harness workers on one task queue and one Postgres (the store), streaming replies to the live
 * views as `harness worker` does, an OpenAI-compatible endpoint that streams each reply for
 * longer than the local window, and a Temporal server that dispatches activities as a deployed
 * one does (through the queue: test/support/plain-server.ts). Every call is handed on; the
 * activity that waits for it must run on the worker that holds the request, or the other worker
 * (about half of the time) sends the request again and both are paid for. Over twelve calls the
 * endpoint counts as many requests as the turns and the ledger count model calls, each one
 * answered whole. A handed-on request that fails, and one whose worker is gone before it takes
 * the activity, are sent again from the shared queue: two requests, counted as two attempts of
 * one call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ModelCallInput } from '../../deterministic/activity-types';
import type { HistoryEvent } from '../../history/trace/events';
import { loadLedger } from '../../history/ledger/load';
import { loadTrace } from '../../history/trace';
import { endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';
import { startSlowStreamEndpoint, type SlowStreamEndpoint } from '../support/slow-stream-endpoint';
import { startPlainServer, type PlainServer } from '../support/plain-server';

let a: TestHarness;
let b: TestHarness;
let endpoint: SlowStreamEndpoint;
let server: PlainServer;
// The local window is short and each reply streams for about a second past it.
const limits = { modelLocalMs: 300 };

beforeAll(async () => {
  endpoint = await startSlowStreamEndpoint({ chunkMs: 150 });
  server = await startPlainServer();
  const env = { OPENAI_API_KEY: 'test-key' };
  a = await startHarness({ env, streamText: true, address: server.address });
  b = await startHarness({ env, streamText: true, address: server.address, taskQueue: a.taskQueue });
  for (const h of [a, b]) h.declarations.add({ modelEndpoints: [endpoint.url] });
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await server?.stop();
  await endpoint?.close();
});

async function historyOf(client: Client, turnId: string): Promise<HistoryEvent[]> {
  return ((await client.workflow.getHandle(turnId).fetchHistory()).events ?? []) as HistoryEvent[];
}

/** The callModel activities a turn scheduled, by their input. */
function modelActivities(events: HistoryEvent[]): ModelCallInput[] {
  return events.flatMap((e) => {
    const s = e.activityTaskScheduledEventAttributes;
    return s?.activityType?.name === 'callModel' ? [defaultPayloadConverter.fromPayload<ModelCallInput>(s.input!.payloads![0]!)] : [];
  });
}

describe('a handed-on model call with two workers polling', () => {
  it('is sent once: requests equal model calls over twelve calls, each answered whole', async () => {
    const sessions = [newSessionId('two-workers'), newSessionId('two-workers')];
    const config = endpointConfig(endpoint.url, limits);
    // Two sessions at once, three turns each, two model calls a turn (the clock, then the answer).
    const turns = await Promise.all(
      sessions.map(async (sessionId) => {
        const results = [];
        for (let turn = 1; turn <= 3; turn++) results.push(await a.finish(sessionId, config, `what time is it? (${turn})`));
        return results;
      }),
    );
    let calls = 0;
    for (const [i, sessionId] of sessions.entries()) {
      for (const r of turns[i]!) {
        expect(r.answer).toMatch(/HARNESS_OK/);
        expect(r.modelCalls).toBe(2);
        calls += r.modelCalls;
        // Both calls were handed on (the test is about those), and the ledger history gives counts them once each.
        const adopted = modelActivities(await historyOf(a.client, r.turnId)).filter((m) => m.adopt);
        expect(adopted).toHaveLength(2);
        const ledger = await loadLedger(a.client, r.turnId, { calls: true });
        expect(ledger.turns[0]!.entries!.filter((e) => e.kind === 'model').map((e) => e.attempts)).toEqual([1, 1]);
      }
      const chats = endpoint.chats(sessionId);
      expect(chats.map((c) => c.status)).toEqual(chats.map(() => 'done'));
      expect(chats).toHaveLength(6);
    }
    expect(calls).toBe(12);
    expect(sessions.flatMap((s) => endpoint.chats(s))).toHaveLength(calls);
  }, 180_000);
});

describe('a handed-on call whose request fails', () => {
  it('is tried again from the shared queue, as one call of two attempts in the trace and the ledger', async () => {
    const sessionId = newSessionId('cut');
    // The second call (the answer, streamed) loses its connection once handed on.
    endpoint.cut(sessionId);
    const r = await a.finish(sessionId, endpointConfig(endpoint.url, limits), 'what time is it?');
    expect(r.answer).toMatch(/HARNESS_OK/);
    expect(endpoint.chats(sessionId).map((c) => [c.callIndex, c.status])).toEqual([
      ['0', 'done'],
      ['1', 'cut'],
      ['1', 'done'],
    ]);
    const models = modelActivities(await historyOf(a.client, r.turnId));
    expect(models.map((m) => [m.callIndex, m.adopt ? 'adopt' : `earlier ${m.earlier?.attempts}`])).toEqual([
      [0, 'adopt'],
      [1, 'adopt'],
      [1, 'earlier 1'],
    ]);
    const llm = (await loadTrace(a.client, r.turnId)).spans.filter((s) => s.span.type === 'llm_call').map((s) => s.span);
    expect(llm.map((s) => [s.status, s.output?.attempts])).toEqual([
      ['ok', 1],
      ['ok', 2],
    ]);
    expect(llm[1]!.output?.last_failure).toBeTruthy();
    const fromHistory = await loadLedger(a.client, r.turnId, { calls: true });
    expect(fromHistory.turns[0]!.entries!.filter((e) => e.kind === 'model').map((e) => e.attempts)).toEqual([1, 2]);
    expect(fromHistory.total).toEqual((await loadLedger(a.client, r.turnId)).total);
  }, 120_000);
});

describe('a handed-on call that is rate limited', () => {
  it('is tried again from the shared queue after the wait the endpoint asked for', async () => {
    const sessionId = newSessionId('limited');
    // The first call, slow, is handed on; then its answer is a 429 asking to wait 2 s.
    endpoint.limit(sessionId, 2);
    const r = await a.finish(sessionId, endpointConfig(endpoint.url, limits), 'what time is it?');
    expect(r.answer).toMatch(/HARNESS_OK/);
    expect(endpoint.chats(sessionId).map((c) => [c.callIndex, c.status])).toEqual([
      ['0', 'limited'],
      ['0', 'done'],
      ['1', 'done'],
    ]);
    // The activity that went on from the hand-off was told to wait what the endpoint asked.
    const models = modelActivities(await historyOf(a.client, r.turnId));
    expect(models.map((m) => [m.callIndex, m.adopt ? 'adopt' : `earlier ${m.earlier?.attempts}`])).toEqual([
      [0, 'adopt'],
      [0, 'earlier 1'],
      [1, 'adopt'],
    ]);
    expect(models[1]!.earlier?.retryAfterMs).toBe(2_000);
  }, 120_000);
});

describe('a handed-on call whose worker is gone before it takes the activity', () => {
  it('is sent again from the shared queue: two requests, one call of two attempts, in the turn, the trace and the ledger', async () => {
    // One worker whose hand-off queue nobody polls: the worker that held the call is gone.
    const lone = await startHarness({ env: { OPENAI_API_KEY: 'test-key' }, streamText: true, address: server.address });
    try {
      lone.declarations.add({ modelEndpoints: [endpoint.url] });
      await expect.poll(() => lone.workers.handoff!.getState(), { timeout: 30_000 }).toBe('RUNNING');
      lone.workers.handoff!.shutdown();
      const sessionId = newSessionId('holder-gone');
      const r = await lone.finish(sessionId, endpointConfig(endpoint.url, limits), 'what time is it?');
      expect(r.answer).toMatch(/HARNESS_OK/);
      expect(r.modelCalls).toBe(2);
      // Each call: the handed-on request (the worker that held it answered nobody), then the one sent again.
      expect(endpoint.chats(sessionId).map((c) => c.callIndex)).toEqual(['0', '0', '1', '1']);
      const models = modelActivities(await historyOf(lone.client, r.turnId));
      expect(models.map((m) => [m.callIndex, m.adopt ? 'adopt' : `earlier ${m.earlier?.attempts}`])).toEqual([
        [0, 'adopt'],
        [0, 'earlier 1'],
        [1, 'adopt'],
        [1, 'earlier 1'],
      ]);
      const llm = (await loadTrace(lone.client, r.turnId)).spans.filter((s) => s.span.type === 'llm_call').map((s) => s.span);
      expect(llm.map((s) => [s.status, s.output?.attempts])).toEqual([
        ['ok', 2],
        ['ok', 2],
      ]);
      expect(String(llm[0]!.output?.last_failure)).toMatch(/did not take it back/);
      // The ledger read from history is the one the turn recorded: two calls of two attempts.
      const fromHistory = await loadLedger(lone.client, r.turnId, { calls: true });
      expect(fromHistory.turns[0]!.entries!.filter((e) => e.kind === 'model').map((e) => e.attempts)).toEqual([2, 2]);
      expect(fromHistory.total).toEqual((await loadLedger(lone.client, r.turnId)).total);
    } finally {
      await lone.stop();
    }
  }, 180_000);
});
