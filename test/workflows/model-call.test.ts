/**
 * Model calls inside the turn's workflow task (workflows/turn/model-call.ts), under the default policy,
 * as history, the trace and the ledger read them: a quick step is one workflow task; a slow reply
 * is handed on to an activity and not sent twice; a failed local attempt is retried by the
 * activity; a local write is recorded before the next model call; a cancelled turn stops its call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { ModelCallInput } from '../../deterministic/activity-types';
import type { Script } from '../../scripted-model/script';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import { decodeEvents, type HistoryEvent } from '../../history/trace/events';
import { loadTrace } from '../../history/trace';
import { loadLedger } from '../../history/ledger/load';
import { modelProgress } from '../../client/model-progress';
import { sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
let server: ScriptedModelServer;
beforeAll(async () => {
  h = await startHarness({ env: { OPENAI_API_KEY: 'test-key' } });
  server = await startScriptedModel();
  h.declarations.add({ modelEndpoints: [server.url] });
});
afterAll(async () => {
  await server?.close();
  await h?.stop();
});

const time = (tz: string) => ({ tool_calls: [{ name: 'get_current_time', arguments: { timezone: tz } }] });
const requestsOf = (sessionId: string) => server.requests.filter((q) => q.session === sessionId).map((q) => [q.index, q.status]);

async function historyOf(client: Client, turnId: string): Promise<HistoryEvent[]> {
  return ((await client.workflow.getHandle(turnId).fetchHistory()).events ?? []) as HistoryEvent[];
}

/** The history's events by kind, in order, with a model call's marker named as one. */
function shape(events: HistoryEvent[]): string[] {
  return events.flatMap((e) => {
    if (e.activityTaskScheduledEventAttributes) return [`activity:${e.activityTaskScheduledEventAttributes.activityType?.name}`];
    if (e.timerStartedEventAttributes) return ['timer'];
    const m = e.markerRecordedEventAttributes;
    if (m?.markerName !== 'core_local_activity') return [];
    const data = defaultPayloadConverter.fromPayload<{ activity_type: string }>(m.details!.data!.payloads![0]!);
    return [`local:${data.activity_type}${m.failure ? '!' : ''}`];
  });
}

const start = (sessionId: string, script: Script, limits: Parameters<typeof endpointConfig>[1] = {}) => {
  server.registerScript(sessionId, script);
  return sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config: endpointConfig(server.url, limits), text: 'go' });
};

describe('a model call in the workflow task', () => {
  it('makes a quick step one workflow task, and history still holds each request and reply', async () => {
    const sessionId = newSessionId('local');
    const { turnId } = await start(sessionId, { steps: [time('UTC'), time('Europe/Paris'), { content: 'Done. HARNESS_OK' }] });
    const out = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(out.kind === 'done' && out.result.terminated_by).toBe('final_answer');
    const events = await historyOf(h.client, turnId);
    expect(shape(events)).toEqual(['local:prepareTurn', 'local:callModel', 'local:executeTool', 'local:callModel', 'local:executeTool', 'local:callModel']);
    expect(events.filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(1);

    // Each marker reads as the call it stands for: its request (step, conversation) and reply.
    const calls = decodeEvents(events).flatMap((e) => (e.kind === 'scheduled' && e.activityType === 'callModel' ? [e.input as ModelCallInput] : []));
    expect(calls.map((c) => [c.step, c.callIndex])).toEqual([[1, 0], [2, 1], [3, 2]]);
    expect(calls[1]!.conversation?.head).toBeTruthy();
    const trace = await loadTrace(h.client, turnId);
    const llm = trace.spans.filter((s) => s.span.type === 'llm_call').map((s) => s.span);
    expect(llm.map((s) => [s.status, s.input.step, s.output?.attempts])).toEqual([['ok', 1, 1], ['ok', 2, 1], ['ok', 3, 1]]);
    expect(llm.every((s) => typeof s.duration_ms === 'number')).toBe(true);
    // The ledger read from history is the one the turn recorded.
    const fromHistory = await loadLedger(h.client, turnId, { calls: true });
    const recorded = await loadLedger(h.client, turnId);
    expect(fromHistory.total).toEqual(recorded.total);
    expect(fromHistory.total.total_tokens).toBeGreaterThan(0);
    expect(fromHistory.turns[0]!.entries!.filter((e) => e.kind === 'model')).toHaveLength(3);
  });

  it('runs every model call as an activity when limits.modelLocalMs is 0', async () => {
    const sessionId = newSessionId('never');
    const { turnId } = await start(sessionId, { steps: [time('UTC'), { content: 'Done. HARNESS_OK' }] }, { modelLocalMs: 0 });
    const out = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(out.kind === 'done' && out.result.answer).toBe('Done. HARNESS_OK');
    expect(shape(await historyOf(h.client, turnId))).toEqual(['local:prepareTurn', 'activity:callModel', 'local:executeTool', 'activity:callModel']);
  });

  it('hands a reply slower than limits.modelLocalMs on to an activity that waits for the same request, shown as pending', async () => {
    const sessionId = newSessionId('handoff');
    const { turnId } = await start(sessionId, { steps: [{ fault: { delay_ms: 2_500 }, content: 'Slow. HARNESS_OK' }] }, { modelLocalMs: 300 });
    // Once handed on, the call is a pending activity: status names its endpoint and attempt.
    await expect
      .poll(async () => modelProgress(await h.client.workflow.getHandle(turnId).describe())?.attempt, { timeout: 10_000, interval: 100 })
      .toBe(1);
    const out = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(out.kind === 'done' && out.result.answer).toBe('Slow. HARNESS_OK');
    expect(requestsOf(sessionId)).toEqual([[0, 200]]);
    const events = await historyOf(h.client, turnId);
    expect(shape(events)).toEqual(['local:prepareTurn', 'local:callModel', 'activity:checkpoint', 'activity:callModel']);
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')!.activityTaskScheduledEventAttributes!;
    expect(defaultPayloadConverter.fromPayload<ModelCallInput>(scheduled.input!.payloads![0]!).adopt).toMatch(new RegExp(`^${turnId}#0#`));
    const llm = (await loadTrace(h.client, turnId)).spans.filter((s) => s.span.type === 'llm_call').map((s) => s.span);
    expect(llm).toHaveLength(1);
    expect(llm[0]!.output).toMatchObject({ attempts: 1 });
    // Its latency counts from the request, which the local activity sent.
    expect((llm[0]!.output as { latency_ms: number }).latency_ms).toBeGreaterThanOrEqual(2_400);
  });

  it('retries a failed local attempt as an activity that counts on from it; the trace and the ledger count both', async () => {
    const sessionId = newSessionId('retried');
    const { turnId } = await start(sessionId, { steps: [{ fault: { status: 503, times: 1 }, content: 'Second try. HARNESS_OK' }] }, { modelMaxAttempts: 3 });
    const out = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(out.kind === 'done' && out.result.answer).toBe('Second try. HARNESS_OK');
    expect(out.kind === 'done' && out.result.retriedAttempts).toBe(1);
    expect(requestsOf(sessionId)).toEqual([[0, 503], [0, 200]]);
    expect(shape(await historyOf(h.client, turnId))).toEqual(['local:prepareTurn', 'local:callModel!', 'activity:checkpoint', 'activity:callModel']);
    const llm = (await loadTrace(h.client, turnId)).spans.filter((s) => s.span.type === 'llm_call').map((s) => s.span);
    expect(llm[0]!.output).toMatchObject({ attempts: 2 });
    expect(JSON.stringify(llm[0]!.output)).toMatch(/503.*local attempt/);
    const entry = (await loadLedger(h.client, turnId, { calls: true })).turns[0]!.entries!.find((e) => e.kind === 'model');
    expect(entry).toMatchObject({ attempts: 2 });
  });

  it('records a local write before the next model call, and a read-only step adds no checkpoint', async () => {
    const sessionId = newSessionId('write');
    server.registerScript(sessionId, {
      steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }] }, time('UTC'), { content: 'Done. HARNESS_OK' }],
    });
    const r = await h.finishApproving(sessionId, endpointConfig(server.url), 'write a.txt');
    expect(r.terminated_by).toBe('final_answer');
    expect(r.asked).toEqual(['write_file: {"path":"a.txt","content":"a"}']);
    // The write's marker is in a workflow task that ends (the checkpoint) before the next model call runs.
    expect(shape(await historyOf(h.client, r.turnId))).toEqual([
      'local:prepareTurn',
      'local:callModel',
      'activity:checkpoint', // before the wait for the approval
      'timer', // the wait (its timeout)
      'local:executeTool',
      'activity:checkpoint',
      'local:callModel',
      'local:executeTool',
      'local:callModel',
    ]);
  });

  it('records the quick steps before the turn waits on a person, so the wait holds none of them', async () => {
    const sessionId = newSessionId('wait');
    const { turnId } = await start(sessionId, { steps: [time('UTC'), { tool_calls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'b' } }] }, { content: 'never' }] });
    const out = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(out.kind === 'waiting' && out.state.pending?.kind).toBe('approvals');
    // A checkpoint ends the task that ran the quick steps; the wait (its timer) comes in the next
    // one. The state query can answer "waiting" before that task's completion reaches history.
    await expect.poll(async () => shape(await historyOf(h.client, turnId)), { timeout: 10_000, interval: 100 }).toEqual(['local:prepareTurn', 'local:callModel', 'local:executeTool', 'local:callModel', 'activity:checkpoint', 'timer']);
    await h.client.workflow.getHandle(turnId).terminate('done looking');
  });

  it('stops the request when the turn is cancelled during a local call, without waiting for the reply', async () => {
    const sessionId = newSessionId('cancel');
    const { turnId } = await start(sessionId, { steps: [{ fault: { delay_ms: 600_000 }, content: 'never' }] }, { modelLocalMs: 10_000 });
    await expect.poll(() => requestsOf(sessionId).length, { timeout: 10_000, interval: 50 }).toBe(1);
    await h.client.workflow.getHandle(turnId).cancel();
    const out = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(out.kind === 'done' && out.result.terminated_by).toBe('cancelled');
    // The reply would take 10 minutes: the turn ended long before it (the cancellation reached the
    // workflow when the local call's hand-off came, at the latest).
    await expect.poll(() => requestsOf(sessionId)[0]![1], { timeout: 5_000 }).toBe(499);
  });
});
