/**
 * Model calls against an endpoint that rate-limits, goes down and refuses, driven through real
 * turns on a worker that streams (as the CLI's do) under the default limits and policy: a 429's
 * Retry-After is waited (the gap between requests, from the endpoint's own clock, is at least
 * what it asked), an outage longer than a few quick attempts is ridden out, the wait is shown
 * live with attempts that count requests, a 400 on a streamed call fails the turn with the
 * provider's words after one request, and streaming is given up only for an endpoint that does
 * not stream.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelProgress, type ModelProgress } from '../../client/model-progress';
import { sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { loadTrace } from '../../history/trace';
import { modelLine } from '../../cli/wait-notes';
import type { SessionConfig } from '../../deterministic/session-config';
import { endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';
import { startLimitedEndpoint, type LimitedEndpoint } from '../support/limited-endpoint';

let h: TestHarness;
const endpoints: LimitedEndpoint[] = [];
beforeAll(async () => {
  h = await startHarness({ streamText: true, env: { OPENAI_API_KEY: 'test-key' } });
});
afterAll(async () => {
  await Promise.all(endpoints.map((e) => e.close()));
  await h?.stop();
});

/** An endpoint of the test's own (a worker remembers per endpoint whether it streams). */
async function endpoint(): Promise<LimitedEndpoint> {
  const e = await startLimitedEndpoint();
  endpoints.push(e);
  return e;
}

const RATE_LIMITED = { status: 429, headers: { 'retry-after': '7' }, message: 'Rate limit reached for test-model: retry in 7s' };

/** Starts a turn and, until it ends, what the turn's description said of its model call, with the requests the endpoint had seen then. */
async function watchedTurn(e: LimitedEndpoint, sessionId: string, config: SessionConfig, text: string) {
  h.declareUsed(config);
  const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text });
  const seen: Array<{ requests: number; progress: ModelProgress; line: string }> = [];
  let done = false;
  const watching = (async () => {
    while (!done) {
      const before = e.requests(sessionId).length;
      const progress = modelProgress(await h.client.workflow.getHandle(turnId).describe());
      // Kept only when no request arrived meanwhile: then it is known which request it describes.
      if (progress && e.requests(sessionId).length === before) seen.push({ requests: before, progress, line: modelLine(progress) });
      await sleep(250);
    }
  })();
  try {
    const out = await waitForTurn(h.client, turnId, { pollMs: 100 });
    if (out.kind !== 'done') throw new Error(`turn is waiting: ${JSON.stringify(out.state)}`);
    return { turnId, result: out.result, seen };
  } finally {
    done = true;
    await watching;
  }
}

describe('a rate-limited or failing model endpoint', () => {
  it("waits what a 429's Retry-After asks, twice, answers on the third request, and says live what it waits for", async () => {
    const e = await endpoint();
    const sessionId = newSessionId('retry-after');
    e.script(sessionId, [RATE_LIMITED, RATE_LIMITED, { content: 'Third time. HARNESS_OK' }]);
    const { turnId, result, seen } = await watchedTurn(e, sessionId, endpointConfig(e.url), 'hello');
    expect(result.terminated_by).toBe('final_answer');
    expect(result.answer).toBe('Third time. HARNESS_OK');
    const requests = e.requests(sessionId);
    expect(requests.map((r) => r.status)).toEqual([429, 429, 200]);
    // Each retry came no sooner than the endpoint asked (the first from the activity after the
    // local attempt, the second from Temporal's retry): a lower bound, from the endpoint's clock.
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(7_000);
    expect(requests[2]!.at - requests[1]!.at).toBeGreaterThanOrEqual(7_000);

    // While it waited, the call said for what and which request comes next.
    const waiting = (n: number) => seen.find((s) => s.requests === n && s.progress.nextAt && s.progress.attempt === n + 1);
    for (const n of [1, 2]) {
      const s = waiting(n);
      expect(s, JSON.stringify(seen.map((x) => [x.requests, x.line]))).toBeDefined();
      expect(s!.progress.outage).toBe('rate limited (HTTP 429)');
      expect(s!.line).toMatch(new RegExp(`\\(attempt ${n + 1} in \\d+ s: rate limited \\(HTTP 429\\), retried for \\d+ s more`));
    }
    // No view ever counted fewer attempts than the requests sent (the local attempt included).
    expect(seen.filter((s) => s.progress.attempt < s.requests)).toEqual([]);
    // History counts the requests too.
    expect(result.retriedAttempts).toBe(2);
    const llm = (await loadTrace(h.client, turnId)).spans.filter((s) => s.span.type === 'llm_call').map((s) => s.span);
    expect(llm[0]!.output).toMatchObject({ attempts: 3 });
  }, 120_000);

  it('rides out a server error lasting 5 s (more than a few quick attempts last) and answers once it is over', async () => {
    const e = await endpoint();
    const sessionId = newSessionId('outage');
    e.script(sessionId, [{ status: 500, message: 'The server had an error while processing your request.', forMs: 5_000 }, { content: 'Back. HARNESS_OK' }]);
    const { result } = await watchedTurn(e, sessionId, endpointConfig(e.url), 'hello');
    expect(result.terminated_by).toBe('final_answer');
    expect(result.answer).toBe('Back. HARNESS_OK');
    const statuses = e.requests(sessionId).map((r) => r.status);
    expect(statuses.at(-1)).toBe(200);
    expect(statuses.slice(0, -1).every((s) => s === 500)).toBe(true);
    expect(result.retriedAttempts).toBe(statuses.length - 1);
  }, 120_000);

  it('fails the turn once an outage outlasts the retry window and the attempts, saying so', async () => {
    const e = await endpoint();
    const sessionId = newSessionId('outlasted');
    e.script(sessionId, [{ status: 503, message: 'Service Unavailable', forMs: 600_000 }]);
    const { result } = await watchedTurn(e, sessionId, endpointConfig(e.url, { modelRetryWindowMs: 3_000, modelMaxAttempts: 2 }), 'hello');
    expect(result.terminated_by).toBe('failed');
    expect(result.error).toMatch(/HTTP 503: Service Unavailable; gave up after \d+ attempts over \d+(\.\d)? s \(limits\.modelRetryWindowSec: 3 s\)/);
    const requests = e.requests(sessionId);
    expect(requests.at(-1)!.at - requests[0]!.at).toBeGreaterThanOrEqual(2_000);
  }, 120_000);

  it('fails the turn at once when the endpoint asks to wait longer than the retry window has left', async () => {
    const e = await endpoint();
    const sessionId = newSessionId('too-long');
    e.script(sessionId, [{ status: 429, headers: { 'retry-after': '3600' }, message: 'You exceeded your current quota' }, { content: 'never' }]);
    const { result } = await watchedTurn(e, sessionId, endpointConfig(e.url), 'hello');
    expect(result.terminated_by).toBe('failed');
    expect(result.error).toContain('You exceeded your current quota; the endpoint asks to wait 3600 s, longer than is left of the 60 s retry window');
    expect(e.requests(sessionId)).toHaveLength(1);
  }, 120_000);
});

describe('a 400 on a streamed call', () => {
  it("fails the turn with the provider's message after one request, and the endpoint is still asked to stream", async () => {
    const e = await endpoint();
    const sessionId = newSessionId('bad-request');
    // The session's first call decides the tool mode (not streamed); the second streams.
    e.script(sessionId, [{ tool: 'get_current_time' }, { status: 400, message: "Invalid 'messages[3].content': string too long", param: 'messages' }, { content: 'never' }]);
    const { result } = await watchedTurn(e, sessionId, endpointConfig(e.url), 'what time is it?');
    expect(result.terminated_by).toBe('failed');
    expect(result.error).toContain("HTTP 400: Invalid 'messages[3].content': string too long");
    expect(e.requests(sessionId).map((r) => [r.stream, r.status])).toEqual([
      [false, 200],
      [true, 400],
    ]);
    // A bad request says nothing about streaming: the next session's calls still stream.
    const next = newSessionId('bad-request-next');
    e.script(next, [{ tool: 'get_current_time' }, { content: 'Streamed. HARNESS_OK' }]);
    const again = await watchedTurn(e, next, endpointConfig(e.url), 'what time is it?');
    expect(again.result.answer).toBe('Streamed. HARNESS_OK');
    expect(e.requests(next).map((r) => [r.stream, r.status])).toEqual([
      [false, 200],
      [true, 200],
    ]);
  }, 120_000);
});

describe('an endpoint that does not stream', () => {
  it('refusing `stream` with a 400 that names it: asked plainly, and plainly from then on', async () => {
    const e = await endpoint();
    const sessionId = newSessionId('refuses-stream');
    e.streaming(sessionId, 'refuses');
    e.script(sessionId, [{ tool: 'get_current_time' }, { content: 'Plainly. HARNESS_OK' }, { content: 'Plainly again. HARNESS_OK' }]);
    const first = await watchedTurn(e, sessionId, endpointConfig(e.url), 'what time is it?');
    expect(first.result.answer).toBe('Plainly. HARNESS_OK');
    const second = await watchedTurn(e, sessionId, endpointConfig(e.url), 'and now?');
    expect(second.result.answer).toBe('Plainly again. HARNESS_OK');
    expect(e.requests(sessionId).map((r) => [r.stream, r.status])).toEqual([
      [false, 200],
      [true, 400],
      [false, 200],
      [false, 200],
    ]);
  }, 120_000);

  it('ignoring `stream` and answering with a whole reply: that reply is the answer, one request', async () => {
    const e = await endpoint();
    const sessionId = newSessionId('ignores-stream');
    e.streaming(sessionId, 'ignores');
    e.script(sessionId, [{ tool: 'get_current_time' }, { content: 'Whole. HARNESS_OK' }, { content: 'Whole again. HARNESS_OK' }]);
    const first = await watchedTurn(e, sessionId, endpointConfig(e.url), 'what time is it?');
    expect(first.result.answer).toBe('Whole. HARNESS_OK');
    const second = await watchedTurn(e, sessionId, endpointConfig(e.url), 'and now?');
    expect(second.result.answer).toBe('Whole again. HARNESS_OK');
    expect(e.requests(sessionId).map((r) => [r.stream, r.status])).toEqual([
      [false, 200],
      [true, 200],
      [false, 200],
    ]);
  }, 120_000);
});
