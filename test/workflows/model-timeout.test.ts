/**
 * A model endpoint that accepts the request and never answers: the call fails with our own
 * timeout, inside the activity's start-to-close, naming the endpoint; a silent endpoint is
 * tried twice, not for every attempt the retry policy allows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';
import { startSilentEndpoint, type SilentEndpoint } from '../support/silent-endpoint';

let h: TestHarness;
let endpoint: SilentEndpoint;

beforeAll(async () => {
  // The key only makes the worker willing to call the endpoint; nothing checks it.
  h = await startHarness({ env: { OPENAI_API_KEY: 'test-key' } });
  endpoint = await startSilentEndpoint();
});
afterAll(async () => {
  await endpoint?.close();
  await h?.stop();
});

describe('a model endpoint that never answers', () => {
  it('fails the turn saying the endpoint did not answer, naming it, after two attempts', async () => {
    const sessionId = newSessionId('silent');
    const r = await h.finish(sessionId, endpointConfig(endpoint.url, { modelTimeoutMs: 4_000, modelHeartbeatMs: 2_000, modelMaxAttempts: 4 }), 'hello');
    expect(r.terminated_by).toBe('failed');
    expect(r.error).toContain(`the model endpoint ${endpoint.url} did not answer within`);
    expect(r.error).toMatch(/2 attempts timed out/);
    expect(r.error).not.toMatch(/StartToClose/i);
    // Quick failures keep every attempt; timeouts stop after two.
    expect(endpoint.requests.filter((q) => q.path.endsWith('/chat/completions'))).toHaveLength(2);

    // Each failed attempt is in history under our name, not Temporal's timeout.
    const events = (await h.client.workflow.getHandle(r.turnId).fetchHistory()).events ?? [];
    const failed = events.find((e) => e.activityTaskFailedEventAttributes)?.activityTaskFailedEventAttributes;
    expect(failed?.failure?.cause?.applicationFailureInfo?.type ?? failed?.failure?.applicationFailureInfo?.type).toBe('MODEL_TIMEOUT');
    expect(events.some((e) => e.activityTaskTimedOutEventAttributes)).toBe(false);
  }, 90_000);
});
