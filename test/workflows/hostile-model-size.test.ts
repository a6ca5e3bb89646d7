/**
 * A model endpoint that answers with 30 MB: plainly, and as one event of a streamed reply. The
 * worker reads no more than its limit (1.5 MiB by default), fails that attempt with
 * MODEL_REPLY_TOO_LARGE, which is not retried (the same request gets the same reply), and the
 * turn ends saying so in one line. Real turns under the default policy against a real HTTP
 * endpoint (test/support/hostile-endpoint.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionConfig } from '../../deterministic/session-config';
import { endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';
import { startHostileEndpoint, type HostileEndpoint } from '../support/hostile-endpoint';
import { watchedTurn } from '../support/watched-turn';

const MB = 1 << 20;
// Built once, before any measurement: the endpoint's own copy of it is all the test adds.
const HUGE = `{"role":"assistant","content":"${'x'.repeat(30 * MB)}"}`;

let h: TestHarness;
let endpoint: HostileEndpoint;
beforeAll(async () => {
  // Workers stream native replies' text (as the CLI's do): the streamed case needs it.
  [h, endpoint] = await Promise.all([startHarness({ streamText: true }), startHostileEndpoint()]);
});
afterAll(async () => {
  await h?.stop();
  await endpoint?.close();
});

/** The largest growth of this process's heap (the worker runs in it) while `run` runs, sampled often. */
async function heapGrowth<T>(run: () => Promise<T>): Promise<{ value: T; grew: number }> {
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 5);
  try {
    const value = await run();
    return { value, grew: Math.max(peak, process.memoryUsage().heapUsed) - before };
  } finally {
    clearInterval(sample);
  }
}

/** Every failure type recorded in a workflow's history (activities, local activities, their causes). */
async function failureTypes(workflowId: string): Promise<string[]> {
  const events = (await h.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  return [...JSON.stringify(events).matchAll(/"type":"([A-Z_]+)"/g)].map((m) => m[1]!);
}

describe('a model reply larger than the worker allows', () => {
  it.each([
    // auto's first call decides the tool mode, which is never streamed: a plain request.
    ['plain', 'auto'],
    // A native call of a worker that streams: the reply comes as one 30 MB event.
    ['streamed', 'native'],
  ] as const)('a 30 MB %s reply fails its attempt as MODEL_REPLY_TOO_LARGE, once, and the turn says so in one line', async (_how, toolMode) => {
    const sessionId = newSessionId('huge-reply');
    endpoint.script(sessionId, [HUGE, HUGE, HUGE]);
    const base = endpointConfig(endpoint.url);
    const config: SessionConfig = { ...base, model: { provider: 'openai', model: 'test-model', baseUrl: endpoint.url, toolMode } };
    h.declareUsed(config);
    const { value: r, grew } = await heapGrowth(() => watchedTurn(h, sessionId, config, 'go'));
    expect(r.terminated_by).toBe('failed');
    expect(r.error).toBe("the model endpoint's reply is larger than 1.5 MiB, the worker's limit (HARNESS_MODEL_REPLY_MAX_BYTES)");
    expect(r.answer).not.toContain('\n');
    // Not retried: one request reached the endpoint.
    expect(endpoint.requests(sessionId)).toHaveLength(1);
    expect(await failureTypes(r.turnId)).toContain('MODEL_REPLY_TOO_LARGE');
    // The endpoint's own copy of the reply is 30 MB of it; the worker held no more than its limit's worth.
    expect(grew).toBeLessThan(160 * MB);
  });

  it('a refusal (HTTP 400) whose body is 30 MB of message ends the turn with a short line, the body read no further than the limit', async () => {
    const sessionId = newSessionId('huge-error');
    endpoint.script(sessionId, [{ $status: 400, $body: `{"error":{"message":"refused\\n${'y'.repeat(30 * MB)}"}}` }]);
    const config = endpointConfig(endpoint.url);
    const { value: r, grew } = await heapGrowth(() => watchedTurn(h, sessionId, config, 'go'));
    expect(r.terminated_by).toBe('failed');
    expect(r.answer).not.toContain('\n');
    expect(r.answer.length).toBeLessThan(1_500);
    expect(endpoint.requests(sessionId)).toHaveLength(1);
    expect(grew).toBeLessThan(160 * MB);
  });
});
