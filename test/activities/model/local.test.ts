/**
 * callModel run as a local activity (workflows/turn/model-call.ts), on the activity side: a quick
 * reply comes back with its request, a slow one is handed on and the callModel activity on the
 * same worker waits for that very request, and a failure tells the activity that tries again
 * what it used and, when permanent, the run it failed in.
 */
import { describe, expect, it } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import type { LocalModelOutcome, ModelCallInput, ModelReply } from '../../../deterministic/activity-types';
import { createCallModel } from '../../../activities/model/activities';
import { ModelHandoffs } from '../../../activities/model/handoffs';
import type { ModelClient, ModelRequest } from '../../../activities/model/client';

const RUN = { workflowId: 's-1/turn-1', runId: 'run-a' };

/** A model that answers each request after `delayMs`, or fails it; it keeps every request it saw. */
function fakeModel(opts: { delayMs?: number; fail?: () => unknown; handoffQueue?: string } = {}) {
  const requests: { req: ModelRequest; aborted: boolean }[] = [];
  const client: ModelClient = {
    complete: (req) =>
      new Promise((resolve, reject) => {
        const seen = { req, aborted: false };
        requests.push(seen);
        const timer = setTimeout(() => {
          if (opts.fail) reject(opts.fail());
          else resolve({ content: `answer ${requests.length}`, toolCalls: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 }, model: 'fake' });
        }, opts.delayMs ?? 0);
        req.signal?.addEventListener('abort', () => {
          seen.aborted = true;
          clearTimeout(timer);
          reject(req.signal!.reason);
        });
      }),
  };
  const callModel = createCallModel(async () => ({ client, endpoint: 'http://fake.test/v1' }), () => [], opts.handoffQueue ? { handoffQueue: opts.handoffQueue } : {});
  return { requests, callModel };
}

const input = (extra: Partial<ModelCallInput> = {}): ModelCallInput => ({
  sessionId: 's-1',
  turnId: 's-1/turn-1',
  step: 1,
  callIndex: 0,
  model: { provider: 'openai', model: 'fake' },
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  ...extra,
});

const local = () => new MockActivityEnvironment({ isLocal: true, startToCloseTimeoutMs: 60_000, workflowExecution: RUN });
const activity = (attempt = 1, runId = RUN.runId) => new MockActivityEnvironment({ attempt, startToCloseTimeoutMs: 60_000, heartbeatTimeoutMs: 5_000, workflowExecution: { ...RUN, runId } });

describe('callModel as a local activity', () => {
  it('returns a quick reply with the request it answers, which history keeps in its marker', async () => {
    const m = fakeModel();
    const out = (await local().run(m.callModel, input({ handOffAfterMs: 1_000 }))) as LocalModelOutcome;
    expect('handoff' in out).toBe(false);
    expect(out).toMatchObject({ content: 'answer 1', attempt: 1, request: { step: 1, callIndex: 0, handOffAfterMs: 1_000 } });
    expect(m.requests).toHaveLength(1);
  });

  it('hands a slow reply on, and the callModel activity on this worker waits for the same request', async () => {
    const m = fakeModel({ delayMs: 400 });
    const out = (await local().run(m.callModel, input({ handOffAfterMs: 50 }))) as LocalModelOutcome;
    expect(out).toEqual({ handoff: expect.stringMatching(/^s-1\/turn-1#0#/) });
    const key = (out as { handoff: string }).handoff;
    const reply = (await activity().run(m.callModel, input({ adopt: key }))) as ModelReply;
    expect(reply).toMatchObject({ content: 'answer 1', attempt: 1 });
    // Not sent twice, and its latency counts from the request's start, not from the hand-over.
    expect(m.requests).toHaveLength(1);
    expect(reply.latencyMs).toBeGreaterThanOrEqual(380);
  });

  it("names the worker's own hand-off queue with the key, where the activity finds the request", async () => {
    const m = fakeModel({ delayMs: 300, handoffQueue: 'tq/handoff-1' });
    const out = (await local().run(m.callModel, input({ handOffAfterMs: 20 }))) as LocalModelOutcome;
    expect(out).toEqual({ handoff: expect.stringMatching(/^s-1\/turn-1#0#/), queue: 'tq/handoff-1' });
    const reply = (await activity().run(m.callModel, input({ adopt: (out as { handoff: string }).handoff }))) as ModelReply;
    expect(reply.content).toBe('answer 1');
    expect(m.requests).toHaveLength(1);
  });

  it('calls again where the handed-on call is not held (the activity ran on another worker)', async () => {
    const m = fakeModel();
    const reply = (await activity().run(m.callModel, input({ adopt: 's-1/turn-1#0#elsewhere' }))) as ModelReply;
    expect(reply.content).toBe('answer 1');
    expect(m.requests).toHaveLength(1);
  });

  it('stops the handed-on request when the activity that took it is cancelled', async () => {
    const m = fakeModel({ delayMs: 5_000 });
    const out = (await local().run(m.callModel, input({ handOffAfterMs: 20 }))) as { handoff: string };
    const env = activity();
    const running = env.run(m.callModel, input({ adopt: out.handoff }));
    await new Promise((r) => setTimeout(r, 50));
    env.cancel();
    await expect(running).rejects.toBeDefined();
    expect(m.requests[0]!.aborted).toBe(true);
  });

  it('names the run a failure happened in, so a permanent one is recorded there and not sent again', async () => {
    const m = fakeModel({ fail: () => ApplicationFailure.nonRetryable('model request failed with HTTP 400: prompt too long', 'MODEL_REQUEST_REJECTED') });
    const err = await local().run(m.callModel, input({ handOffAfterMs: 1_000 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApplicationFailure);
    expect((err as ApplicationFailure).details?.[0]).toMatchObject({ attempt: 1, runId: RUN.runId });

    const earlier = { attempts: 1, failure: 'model request failed with HTTP 400: prompt too long', permanent: { type: 'MODEL_REQUEST_REJECTED', runId: RUN.runId } };
    const recorded = await activity().run(m.callModel, input({ earlier })).catch((e: unknown) => e);
    expect(recorded).toMatchObject({ type: 'MODEL_REQUEST_REJECTED', nonRetryable: true, message: earlier.failure });
    expect((recorded as ApplicationFailure).details?.[0]).toEqual({ attempt: 1 });
    expect(m.requests).toHaveLength(1);

    // In another run (harness retry reset the turn) the request goes out again.
    await activity(1, 'run-b').run(m.callModel, input({ earlier })).catch(() => undefined);
    expect(m.requests).toHaveLength(2);
  });

  it('counts its attempts on from a failed local attempt and carries what that attempt wasted', async () => {
    const m = fakeModel();
    const wasted = { prompt_tokens: 7, completion_tokens: 0, total_tokens: 7 };
    const reply = (await activity(2).run(m.callModel, input({ earlier: { attempts: 1, failure: 'HTTP 500', wasted } }))) as ModelReply;
    expect(reply.attempt).toBe(3);
    expect(reply.wasted).toEqual(wasted);
  });
});

describe('ModelHandoffs', () => {
  it('gives a call once, and stops one nobody takes', async () => {
    const aborted: number[] = [];
    const handoffs = new ModelHandoffs(30);
    const a = { input: { turnId: 't', callIndex: 1 }, abort: () => aborted.push(1) };
    const b = { input: { turnId: 't', callIndex: 2 }, abort: () => aborted.push(2) };
    const ka = handoffs.put(a);
    handoffs.put(b);
    expect(handoffs.take(ka)).toBe(a);
    expect(handoffs.take(ka)).toBeUndefined();
    await new Promise((r) => setTimeout(r, 80));
    expect(aborted).toEqual([2]);
    expect(handoffs.size).toBe(0);
  });
});
