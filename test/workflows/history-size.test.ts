/**
 * Histories that stay small: every message is stored once in the message store and the
 * workflow holds references, so a model call's input does not grow with the conversation, a
 * conversation larger than Temporal's 2 MB payload limit goes through, and a long turn
 * continues as new between steps while answers and approvals still reach it.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnResult } from '../../deterministic/session';
import type { TurnState } from '../../deterministic/session-state';
import type { ModelCallInput } from '../../deterministic/activity-types';
import { answerQuestion, decideApprovals, sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { turnStateQuery } from '../../deterministic/messages';
import { InMemoryMessageStore, StoreUnavailableError } from '../../activities/store/message-store';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
  if (h?.home) rmSync(h.home, { recursive: true, force: true });
});

type History = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>;

/** The sizes of every payload in a history (inputs, results, markers, signals, updates). */
function payloadSizes(events: History): number[] {
  const sizes: number[] = [];
  const walk = (v: unknown): void => {
    if (!v || typeof v !== 'object') return;
    if (v instanceof Uint8Array) return;
    const o = v as Record<string, unknown>;
    if (Array.isArray(o.payloads)) for (const p of o.payloads as { data?: Uint8Array }[]) sizes.push(p.data?.length ?? 0);
    for (const value of Object.values(o)) walk(value);
  };
  for (const e of events) walk(e);
  return sizes;
}

/** Every run of a workflow id, oldest first, with its history. */
async function runsOf(workflowId: string): Promise<History[]> {
  const runs: { start: number; runId: string }[] = [];
  for await (const wf of h.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) runs.push({ start: wf.startTime.getTime(), runId: wf.runId });
  runs.sort((a, b) => a.start - b.start);
  const out: History[] = [];
  for (const r of runs) out.push((await h.client.workflow.getHandle(workflowId, r.runId).fetchHistory()).events ?? []);
  return out;
}

describe('history size', () => {
  it('takes a conversation larger than 2 MB through a turn, with no payload in history over 64 KB', async () => {
    const sessionId = newSessionId('big');
    const ws = path.join(h.home, 'workspaces', sessionId);
    mkdirSync(ws, { recursive: true });
    // Four files of 700 KB: 2.8 MB of tool results, more than Temporal accepts in one payload.
    for (let i = 0; i < 4; i++) writeFileSync(path.join(ws, `part${i}.txt`), `PART-${i}-MARKER\n${'x'.repeat(700_000)}`);
    const read = (i: number) => ({ tool_calls: [{ name: 'read_file', arguments: { path: `part${i}.txt`, max_bytes: 1_000_000 } }] });
    const script = {
      steps: [read(0), read(1), read(2), read(3), { expect: { messages_contain: 'PART-0-MARKER' }, content: 'All four parts read. HARNESS_OK' }],
    };
    const r = await h.finish(sessionId, scriptedConfig(script, {}, DEFAULT_POLICY), 'read the four parts');
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('All four parts read. HARNESS_OK');
    expect(JSON.stringify(r.messages).length).toBeGreaterThan(2_800_000);

    const events = (await h.client.workflow.getHandle(r.turnId).fetchHistory()).events ?? [];
    const sizes = payloadSizes(events);
    expect(Math.max(...sizes)).toBeLessThan(64 * 1024);
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThan(256 * 1024);
  });

  it('keeps what the model writes out of history: every step of a write-heavy turn adds about the same few kilobytes', async () => {
    const sessionId = newSessionId('writes');
    const steps = 24;
    const body = (i: number) => `BODY-${i}-${'y'.repeat(8_000)}`;
    const script = {
      steps: [
        ...Array.from({ length: steps }, (_, i) => ({ tool_calls: [{ name: 'write_file', arguments: { path: `f${i}.txt`, content: body(i) } }] })),
        { content: 'Written. HARNESS_OK' },
      ],
    };
    const config = scriptedConfig(script, { maxSteps: steps + 1 }, DEFAULT_POLICY);
    // Under the default policy each write asks and is approved: the wait and the decision must
    // keep the bodies out of history too.
    const r = await h.finishApproving(sessionId, config, 'write the files');
    expect(r.asked).toHaveLength(steps);
    expect(r.terminated_by).toBe('final_answer');
    const events = (await h.client.workflow.getHandle(r.turnId).fetchHistory()).events ?? [];
    const sizes = payloadSizes(events);
    const total = sizes.reduce((a, b) => a + b, 0);
    // 24 × 8 KB were written; the history holds references and previews only.
    expect(total).toBeLessThan(steps * 8_000);
    expect(Math.max(...sizes)).toBeLessThan(16 * 1024);
    // The bodies are in the store, not in history (only a 120-character preview of each).
    const raw = JSON.stringify(events, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : v));
    expect(raw).not.toContain('y'.repeat(1_000));
    expect(await h.messages(r).then((m) => JSON.stringify(m))).toContain(body(steps - 1));
  });

  it('runs a 1,000-step turn across several runs, counting every step once', async () => {
    const sessionId = newSessionId('long');
    const steps = 1_000;
    const script = {
      steps: [...Array.from({ length: steps - 1 }, () => ({ tool_calls: [{ name: 'get_current_time', arguments: {} }] })), { content: 'Done. HARNESS_OK' }],
    };
    // A quick step is about two events (its model call and its tool, both local activities): a
    // budget of 600 continues the turn as new about every 300 steps.
    const config = scriptedConfig(script, { maxSteps: steps, repeatLimit: 10_000, turnEventBudget: 600 }, DEFAULT_POLICY);
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'tick' });
    const out = await waitForTurn(h.client, turnId, { pollMs: 500 });
    if (out.kind !== 'done') throw new Error('the turn waits');
    // Older call records are in the store, in chunks: the result itself stays small.
    expect(out.result.toolCalls.length).toBeLessThan(100);
    expect(JSON.stringify(out.result).length).toBeLessThan(64 * 1024);
    const r: TurnResult = await h.complete(out.result);
    expect(r.terminated_by).toBe('final_answer');
    expect(r.steps).toBe(steps);
    expect(r.modelCalls).toBe(steps);
    expect(r.toolCalls.map((c) => c.step)).toEqual(Array.from({ length: steps - 1 }, (_, i) => i + 1));
    expect(new Set(r.toolCalls.map((c) => c.callId)).size).toBe(steps - 1);
    expect(r.conversation?.count).toBe(1 + 2 * (steps - 1) + 1);

    const runs = await runsOf(turnId);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    for (const events of runs) expect(events.length).toBeLessThan(2_500);
    // The session got the one result of the whole chain.
    expect((await sessionState(h.client, sessionId)).lastTurn).toMatchObject({ turnId, steps });
  }, 300_000);

  it('delivers an answer and an approval to a turn that has continued as new', async () => {
    const sessionId = newSessionId('cont');
    const tick = { tool_calls: [{ name: 'get_current_time', arguments: {} }] };
    const script = {
      steps: [
        ...Array.from({ length: 12 }, () => tick),
        { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which file name?' } }] },
        { expect: { last_message_contains: 'notes.txt' }, tool_calls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'kept' } }] },
        { expect: { last_message_contains: '"ok":true' }, content: 'Wrote notes.txt. HARNESS_OK' },
      ],
    };
    const config = scriptedConfig(script, { repeatLimit: 100, turnEventBudget: 40 }, DEFAULT_POLICY);
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'go' });
    const first = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(first.kind === 'waiting' && first.state.pending).toMatchObject({ kind: 'question', question: 'Which file name?' });
    expect((await runsOf(turnId)).length).toBeGreaterThan(1);

    await answerQuestion(h.client, sessionId, 'notes.txt');
    const second = await waitForTurn(h.client, turnId, { pollMs: 100 });
    if (second.kind !== 'waiting') throw new Error('expected the write to ask for approval');
    expect(second.state.pending).toMatchObject({ kind: 'approvals', calls: [{ tool: 'write_file' }] });
    await decideApprovals(h.client, sessionId, { approve: true });
    const done = await waitForTurn(h.client, turnId, { pollMs: 100 });
    if (done.kind !== 'done') throw new Error('the turn still waits');
    expect(done.result.answer).toBe('Wrote notes.txt. HARNESS_OK');
    expect(((await h.client.workflow.getHandle(turnId).query(turnStateQuery)) as TurnState).status).toBe('done');
  }, 120_000);

  it("stores a scripted model's script once: the session's turns carry its reference", async () => {
    const sessionId = newSessionId('script');
    const filler = 'q'.repeat(50_000);
    const script = { steps: [{ content: `Hi. HARNESS_OK ${filler.slice(0, 10)}` }, { content: filler }] };
    const r = await h.finish(sessionId, scriptedConfig(script, {}, DEFAULT_POLICY), 'hello');
    expect(r.answer).toMatch(/^Hi\. HARNESS_OK/);
    const events = (await h.client.workflow.getHandle(r.turnId).fetchHistory()).events ?? [];
    const started = events.find((e) => e.workflowExecutionStartedEventAttributes)!;
    const input = payloadSizes([started]);
    expect(Math.max(...input)).toBeLessThan(20_000);
  });
});

describe('the message store down', () => {
  let down: TestHarness;
  let failures = 0;
  let writes = 0;
  beforeAll(async () => {
    const store = new InMemoryMessageStore();
    // Unreachable for the first few writes, then back: what a restarting database looks like.
    const flaky = Object.assign(Object.create(store) as InMemoryMessageStore, {
      putBlobs: async (...args: Parameters<InMemoryMessageStore['putBlobs']>) => {
        // The session's first write (its script) goes through; the model call's next two do not.
        // (The worker's best-effort copy of the script for other hosts is not counted.)
        if (args[1].every((b) => b.hash === 'scripted-model-script')) return store.putBlobs(...args);
        if (writes++ >= 1 && failures++ < 2) throw new StoreUnavailableError('message store unavailable: connect ECONNREFUSED 127.0.0.1:5432');
        return store.putBlobs(...args);
      },
    });
    down = await startHarness({ messageStore: async () => flaky });
  });
  afterAll(async () => {
    await down?.stop();
    if (down?.home) rmSync(down.home, { recursive: true, force: true });
  });

  it('is a retryable STORE_UNAVAILABLE failure of the model call, and the turn goes on once it is back', async () => {
    const script = { steps: [{ content: 'Back again. HARNESS_OK' }] };
    const r = await down.finish(newSessionId('down'), scriptedConfig(script, { modelMaxAttempts: 5 }, DEFAULT_POLICY), 'hello');
    expect(r.answer).toBe('Back again. HARNESS_OK');
    const events = (await down.client.workflow.getHandle(r.turnId).fetchHistory()).events ?? [];
    // The attempt that succeeded records the failure before it (what `status` shows meanwhile).
    const started = events.filter((e) => e.activityTaskStartedEventAttributes?.lastFailure);
    expect(started.length).toBeGreaterThanOrEqual(1);
    // The first attempt ran as a local activity (workflows/turn/model-call.ts): the activity's count on from it.
    expect(Number(started[0]!.activityTaskStartedEventAttributes!.attempt)).toBe(2);
    const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')!;
    const input = defaultPayloadConverter.fromPayload<ModelCallInput>(scheduled.activityTaskScheduledEventAttributes!.input!.payloads![0]!);
    expect(input.earlier).toMatchObject({ attempts: 1, failure: expect.stringMatching(/message store unavailable/) });
    const failure = started[0]!.activityTaskStartedEventAttributes!.lastFailure!;
    expect(failure.applicationFailureInfo?.type).toBe('STORE_UNAVAILABLE');
    expect(failure.applicationFailureInfo?.nonRetryable).toBeFalsy();
    expect(failure.message).toMatch(/^message store unavailable: connect ECONNREFUSED/);
  });
});
