import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelCallInput, ModelReply } from '../../deterministic/activity-types';
import type { Script } from '../../scripted-model/script';
import { startScriptedModel } from '../../scripted-model/server';
import { endpointConfig, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

/** Runs one turn against a scripted server started for this test only. */
async function withServer<T>(script: Script, run: (server: Awaited<ReturnType<typeof startScriptedModel>>, sessionId: string) => Promise<T>): Promise<T> {
  const server = await startScriptedModel();
  const sessionId = newSessionId();
  server.registerScript(sessionId, script);
  try {
    return await run(server, sessionId);
  } finally {
    await server.close();
  }
}

describe('model errors', () => {
  it('retries a 429 twice and succeeds on the third attempt, with the attempts visible in history', async () => {
    await withServer(
      { steps: [{ fault: { status: 429, times: 2 }, content: 'Third time lucky. HARNESS_OK' }] },
      async (server, sessionId) => {
        const r = await h.finish(sessionId, endpointConfig(server.url, { modelMaxAttempts: 4 }), 'hello');
        expect(r.terminated_by).toBe('final_answer');
        expect(r.answer).toBe('Third time lucky. HARNESS_OK');
        expect(r.steps).toBe(1);
        // The turn counts the attempts beyond the first (an eval lowers its concurrency on them).
        expect(r.retriedAttempts).toBe(2);

        const mine = server.requests.filter((q) => q.session === sessionId);
        expect(mine.map((q) => [q.index, q.status])).toEqual([
          [0, 429],
          [0, 429],
          [0, 200],
        ]);

        const history = await h.client.workflow.getHandle(r.turnId).fetchHistory();
        const events = history.events ?? [];
        const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel');
        expect(scheduled).toBeDefined();
        // The first attempt ran as a local activity; the activity's attempts count on from it.
        const input = defaultPayloadConverter.fromPayload<ModelCallInput>(scheduled!.activityTaskScheduledEventAttributes!.input!.payloads![0]!);
        expect(input.earlier).toMatchObject({ attempts: 1, failure: expect.stringMatching(/HTTP 429/) });
        const started = events.find((e) => e.activityTaskStartedEventAttributes?.scheduledEventId?.toString() === scheduled!.eventId!.toString());
        expect(started?.activityTaskStartedEventAttributes?.attempt).toBe(2);
        expect(started?.activityTaskStartedEventAttributes?.lastFailure?.message).toMatch(/HTTP 429/);
        const completed = events.find(
          (e) => e.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === scheduled!.eventId!.toString(),
        );
        const payload = completed?.activityTaskCompletedEventAttributes?.result?.payloads?.[0];
        expect(payload).toBeDefined();
        const reply = defaultPayloadConverter.fromPayload<ModelReply>(payload!);
        expect(reply.attempt).toBe(3);
        expect(reply.content).toBe('Third time lucky. HARNESS_OK');
      },
    );
  });

  it('sends the session id in x-harness-session and a stable call index in x-harness-call-index', async () => {
    await withServer(
      {
        steps: [
          { tool_calls: [{ name: 'get_current_time', arguments: {} }] },
          { fault: { status: 503, times: 1 }, content: 'Done. HARNESS_OK' },
        ],
      },
      async (server, sessionId) => {
        const r = await h.finish(sessionId, endpointConfig(server.url, { modelMaxAttempts: 3 }), 'time?');
        expect(r.terminated_by).toBe('final_answer');
        const mine = server.requests.filter((q) => q.session === sessionId);
        // The retried second call replays step 2 (index 1), never step 3.
        expect(mine.map((q) => [q.index, q.status])).toEqual([
          [0, 200],
          [1, 503],
          [1, 200],
        ]);
      },
    );
  });

  it('ends the turn as failed with the provider message when the model answers 400', async () => {
    await withServer(
      { steps: [{ fault: { status: 400, times: 1, message: 'context_length_exceeded: prompt too long for model' }, content: 'never' }] },
      async (server, sessionId) => {
        const r = await h.finish(sessionId, endpointConfig(server.url, { modelMaxAttempts: 4 }), 'hello');
        expect(r.terminated_by).toBe('failed');
        expect(r.error).toContain('context_length_exceeded: prompt too long for model');
        expect(r.error).toContain('HTTP 400');
        expect(r.answer).toContain('context_length_exceeded: prompt too long for model');
        // A 400 is permanent: exactly one request, no retries.
        expect(server.requests.filter((q) => q.session === sessionId)).toHaveLength(1);
      },
    );
  });

  it('fails the turn clearly when a script expectation is unmet, naming the step and the expected text', async () => {
    const r = await h.finish(
      newSessionId(),
      scriptedConfig(
        {
          steps: [
            { tool_calls: [{ name: 'get_current_time', arguments: {} }] },
            { expect: { last_message_contains: 'EXPECTED-MARKER-123' }, content: 'never' },
          ],
        },
        { modelMaxAttempts: 4 },
      ),
      'hello',
    );
    expect(r.terminated_by).toBe('failed');
    expect(r.steps).toBe(2);
    expect(r.error).toMatch(/step 2 expectation failed/);
    expect(r.error).toContain('EXPECTED-MARKER-123');
    // The partial work of the turn is kept.
    expect(r.toolCalls).toHaveLength(1);
  });

  it('fails the turn clearly when the script is exhausted', async () => {
    const r = await h.finish(
      newSessionId(),
      scriptedConfig({ steps: [{ tool_calls: [{ name: 'get_current_time', arguments: {} }] }] }),
      'hello',
    );
    expect(r.terminated_by).toBe('failed');
    expect(r.error).toMatch(/script exhausted after 1 steps/);
  });

  it('recovers from a single 500 and completes the turn', async () => {
    await withServer({ steps: [{ fault: { status: 500 }, content: 'Recovered from 500. HARNESS_OK' }] }, async (server, sessionId) => {
      const r = await h.finish(sessionId, endpointConfig(server.url, { modelMaxAttempts: 3 }), 'hello');
      expect(r.terminated_by).toBe('final_answer');
      expect(r.answer).toBe('Recovered from 500. HARNESS_OK');
      expect(server.requests.filter((q) => q.session === sessionId).map((q) => q.status)).toEqual([500, 200]);
    });
  });

  it('ends the turn as failed once the model attempts are used up on 5xx (with no retry window)', async () => {
    await withServer({ steps: [{ fault: { status: 502, times: 10 }, content: 'never' }] }, async (server, sessionId) => {
      const r = await h.finish(sessionId, endpointConfig(server.url, { modelMaxAttempts: 2, modelRetryWindowMs: 0 }), 'hello');
      expect(r.terminated_by).toBe('failed');
      expect(r.error).toContain('HTTP 502');
      expect(server.requests.filter((q) => q.session === sessionId)).toHaveLength(2);
    });
  });
});
