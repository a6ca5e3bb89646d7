/**
 * The parts of model call retries that are plain functions: reading Retry-After, the verdict on a
 * failed attempt, the attempt cap, what a turn's description and the wait line say of a call that
 * waits, which refusals mean "does not stream", and the limit in a config file.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { retryAfterMs, toModelFailure } from '../../../activities/model/errors';
import { decideRetry, localFailure, MAX_ASKED_PAST_WINDOW_MS } from '../../../activities/model/retry';
import { refusesStreaming } from '../../../activities/model/stream';
import { attemptCap, backoffMs } from '../../../deterministic/model-retry';
import { modelProgress } from '../../../client/model-progress';
import { modelLine } from '../../../cli/wait-notes';
import { resolveSessionConfig } from '../../../config/resolve';
import { trustedPart } from '../../../config/trust';

const ENDPOINT = 'http://127.0.0.1:9/v1';
const httpError = (status: number, headers: Record<string, string> = {}, error: Record<string, unknown> = { message: `HTTP ${status} here` }) =>
  OpenAI.APIError.generate(status, { error }, undefined, new Headers(headers));
const failure = (status: number, headers: Record<string, string> = {}) => toModelFailure(httpError(status, headers), ENDPOINT);
const RETRY = { attempts: 5, windowMs: 60_000 };

describe('Retry-After', () => {
  it('is read in seconds, as an HTTP date, and as retry-after-ms (which wins); anything else is no wait', () => {
    expect(retryAfterMs(new Headers({ 'retry-after': '7' }))).toBe(7_000);
    expect(retryAfterMs(new Headers({ 'retry-after': '1.5' }))).toBe(1_500);
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:20 GMT' }), now)).toBe(20_000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }), now)).toBe(0);
    expect(retryAfterMs(new Headers({ 'retry-after': '7', 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterMs(new Headers({ 'retry-after': '-3' }))).toBeUndefined();
    expect(retryAfterMs(new Headers())).toBeUndefined();
  });

  it("becomes the failure's next retry delay; a 400 is a permanent MODEL_BAD_REQUEST with the provider's words", () => {
    expect(failure(429, { 'retry-after': '7' })).toMatchObject({ type: 'MODEL_HTTP_429', nonRetryable: false, nextRetryDelay: 7_000 });
    expect(failure(503)).toMatchObject({ type: 'MODEL_HTTP_503', nonRetryable: false, nextRetryDelay: undefined });
    expect(toModelFailure(httpError(400, {}, { message: 'context_length_exceeded' }), ENDPOINT)).toMatchObject({
      type: 'MODEL_BAD_REQUEST',
      nonRetryable: true,
      message: 'model request failed with HTTP 400: context_length_exceeded',
    });
    expect(failure(401)).toMatchObject({ type: 'MODEL_REQUEST_REJECTED', nonRetryable: true });
  });
});

describe('the verdict on a failed attempt', () => {
  const at = (attempt: number, elapsedMs: number, activityAttempt = attempt) => ({ attempt, activityAttempt, elapsedMs, retry: RETRY });

  it('retries an outage past the attempts while the window lasts, waiting what the endpoint asked (at least the backoff)', () => {
    const v = decideRetry(failure(429, { 'retry-after': '7' }), at(9, 20_000, 2));
    expect(v).toMatchObject({ nextMs: 7_000, windowLeftMs: 40_000, failure: { nonRetryable: false, nextRetryDelay: 7_000 } });
    // A Retry-After shorter than the backoff: the backoff (which bounds how many attempts fit in the window).
    expect(decideRetry(failure(429, { 'retry-after': '0' }), at(4, 10_000)).nextMs).toBe(backoffMs(4));
    expect(decideRetry(failure(429, { 'retry-after': '7' }), at(9, 20_000)).nextMs).toBe(30_000);
    // No Retry-After: the backoff, the last one shortened to end at the window's end.
    expect(decideRetry(failure(502), at(7, 50_000)).nextMs).toBe(10_000);
  });

  it('ends the call when the endpoint asks for longer than the window has left, or once window and attempts are spent', () => {
    const asked = decideRetry(failure(429, { 'retry-after': '30' }), at(2, 40_000)).failure as ApplicationFailure;
    expect(asked.nonRetryable).toBe(true);
    expect(asked.message).toMatch(/; the endpoint asks to wait 30 s, longer than is left of the 60 s retry window \(limits\.modelRetryWindowSec\)$/);
    const spent = decideRetry(failure(503), at(9, 61_000)).failure as ApplicationFailure;
    expect(spent).toMatchObject({ nonRetryable: true, type: 'MODEL_HTTP_503' });
    expect(spent.message).toMatch(/; gave up after 9 attempts over 61 s \(limits\.modelRetryWindowSec: 60 s\)$/);
  });

  it('past the window keeps the attempts, and waits a Retry-After of up to a minute', () => {
    const none = { attempts: 5, windowMs: 0 };
    expect(decideRetry(failure(503), { attempt: 2, activityAttempt: 2, elapsedMs: 1_000, retry: none })).toMatchObject({ nextMs: backoffMs(2) });
    expect(decideRetry(failure(429, { 'retry-after': '20' }), { attempt: 2, activityAttempt: 2, elapsedMs: 1_000, retry: none }).nextMs).toBe(20_000);
    const long = decideRetry(failure(429, { 'retry-after': String(MAX_ASKED_PAST_WINDOW_MS / 1000 + 1) }), { attempt: 2, activityAttempt: 2, elapsedMs: 1_000, retry: none });
    expect((long.failure as ApplicationFailure).nonRetryable).toBe(true);
    expect((decideRetry(failure(503), { attempt: 5, activityAttempt: 4, elapsedMs: 1_000, retry: none }).failure as ApplicationFailure).nonRetryable).toBe(true);
  });

  it('gives any other failure the attempts, whatever the window, and leaves a permanent one as it is', () => {
    const timeout = ApplicationFailure.retryable('the model endpoint did not answer within 7 s', 'MODEL_TIMEOUT');
    expect(decideRetry(timeout, at(4, 1_000)).failure).toBe(timeout);
    expect(decideRetry(timeout, at(5, 1_000)).failure).toMatchObject({ nonRetryable: true, type: 'MODEL_TIMEOUT', message: timeout.message });
    const plain = decideRetry(new Error('socket hang up'), at(5, 1_000)).failure;
    expect(plain).toMatchObject({ nonRetryable: true, message: 'socket hang up' });
    const bad = failure(400);
    expect(decideRetry(bad, at(1, 0)).failure).toBe(bad);
  });

  it('a workflow that sent no bounds keeps its own attempts, a Retry-After waited up to a minute', () => {
    expect(decideRetry(failure(429, { 'retry-after': '7' }), { attempt: 9, activityAttempt: 9, elapsedMs: 0 }).nextMs).toBe(7_000);
    expect(decideRetry(failure(429, { 'retry-after': '600' }), { attempt: 1, activityAttempt: 1, elapsedMs: 0 }).nextMs).toBe(60_000);
  });

  it("puts a local attempt's wait in its details, where the workflow reads it", () => {
    const f = localFailure(ApplicationFailure.create({ message: 'm', type: 'MODEL_HTTP_429', details: [{ attempt: 1 }], nextRetryDelay: 7_000 }), 1, RETRY) as ApplicationFailure;
    expect(f.details?.[0]).toEqual({ attempt: 1, retryAfterMs: 7_000 });
  });

  it('caps Temporal attempts at the attempts plus the backoffs that fit in the window', () => {
    // 0.5, 1, 2, 4, 8, 16, 30 s: seven retries start within a minute.
    expect(attemptCap({ attempts: 5, windowMs: 60_000 })).toBe(13);
    expect(attemptCap({ attempts: 5, windowMs: 0 })).toBe(6);
  });
});

describe('streaming refused', () => {
  it('only by an error that names stream (in its param or words), never by any 400', () => {
    expect(refusesStreaming(httpError(400, {}, { message: "Unsupported value: 'stream' does not support true with this model.", param: 'stream' }))).toBe(true);
    expect(refusesStreaming(httpError(422, {}, { message: 'stream_options: Extra inputs are not permitted' }))).toBe(true);
    expect(refusesStreaming(httpError(501, {}, { message: 'Streaming is not implemented' }))).toBe(true);
    expect(refusesStreaming(httpError(400, {}, { message: "Invalid 'messages[3].content': string too long", param: 'messages' }))).toBe(false);
    expect(refusesStreaming(httpError(404, {}, { message: 'model not found' }))).toBe(false);
    expect(refusesStreaming(httpError(400, {}, { message: 'upstream provider rejected the request' }))).toBe(false);
    expect(refusesStreaming(httpError(429, {}, { message: 'too many streams' }))).toBe(false);
  });
});

describe('what a waiting view says', () => {
  const describeWith = (pending: Record<string, unknown>, details?: Record<string, unknown>) =>
    ({
      raw: {
        pendingActivities: [
          { activityType: { name: 'callModel' }, ...pending, ...(details ? { heartbeatDetails: { payloads: [defaultPayloadConverter.toPayload(details)] } } : {}) },
        ],
      },
    }) as unknown as WorkflowExecutionDescription;
  const ts = (ms: number) => ({ seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 });

  it('counts the local attempt, takes the limit from the heartbeat, and says the wait between attempts', () => {
    const now = Date.now();
    const p = modelProgress(
      describeWith(
        { attempt: 2, maximumAttempts: 12, state: 1, nextAttemptScheduleTime: ts(now + 6_500), lastFailure: { message: 'model request failed with HTTP 429: slow down' } },
        { endpoint: ENDPOINT, timeouts: 0, earlier: 1, maxAttempts: 5, outage: 'rate limited (HTTP 429)', retryUntil: now + 41_000, nextAt: now + 6_500 },
      ),
    )!;
    expect(p).toMatchObject({ attempt: 3, maxAttempts: 5, outage: 'rate limited (HTTP 429)', endpoint: ENDPOINT });
    expect(modelLine(p, now)).toBe(
      `… waiting for the model at ${ENDPOINT} (attempt 3 in 7 s: rate limited (HTTP 429), retried for 41 s more; last failure: model request failed with HTTP 429: slow down)`,
    );
  });

  it('says "of" the attempts for a call that is not waiting out an outage, and keeps an older worker\'s count', () => {
    const running = modelProgress(describeWith({ attempt: 1, maximumAttempts: 12, state: 2 }, { endpoint: ENDPOINT, timeouts: 0, earlier: 1, maxAttempts: 5 }))!;
    expect(modelLine(running)).toBe(`… waiting for the model at ${ENDPOINT} (attempt 2 of 5)`);
    const older = modelProgress(describeWith({ attempt: 2, maximumAttempts: 3, state: 2 }, { endpoint: ENDPOINT, timeouts: 1 }))!;
    expect(older).toMatchObject({ attempt: 2, maxAttempts: 3 });
  });
});

describe('limits.modelRetryWindowSec', () => {
  it('defaults to 60 s, and a config file sets it (0: off)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-retry-window-'));
    const withLimits = (limits: Record<string, unknown>) => {
      const file = path.join(dir, `c${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(file, JSON.stringify({ limits }));
      return resolveSessionConfig({ model: 'm', config: file }, {}, dir).limits.modelRetryWindowMs;
    };
    expect(withLimits({})).toBe(60_000);
    expect(withLimits({ modelRetryWindowSec: 0 })).toBe(0);
    expect(withLimits({ modelRetryWindowSec: 120 })).toBe(120_000);
    // An untrusted file may shorten it, not stretch it (a turn would hang on longer).
    expect(trustedPart({ limits: { modelRetryWindowSec: 3600 } }).ignored).toEqual(['limits.modelRetryWindowSec 3600 (above the default 60)']);
    expect(trustedPart({ limits: { modelRetryWindowSec: 10 } }).ignored).toEqual([]);
  });
});
