/**
 * Maps provider errors onto Temporal retry semantics: transient ones (408, 409, 429, 5xx,
 * network) are retried by the activity's policy, an endpoint's Retry-After read as the wait
 * before the next attempt (model-retry.ts bounds it); a 400 and any other 4xx are permanent and
 * end the turn with the provider's own message.
 */
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';

const RETRYABLE_STATUS = new Set([408, 409, 429]);

/** Whether an HTTP status from a model endpoint is worth retrying. */
function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUS.has(status) || status >= 500;
}

/**
 * How long one attempt waits for the endpoint: the activity's start-to-close timeout less a
 * margin (10%, 1 to 5 s) in which our failure reaches Temporal before its own timeout fires;
 * undefined when the activity has no start-to-close timeout.
 */
export function attemptBudgetMs(startToCloseMs: number | undefined): number | undefined {
  if (!startToCloseMs || !Number.isFinite(startToCloseMs) || startToCloseMs <= 0) return undefined; // no timeout to stay within
  const margin = Math.min(5_000, Math.max(1_000, startToCloseMs / 10));
  return Math.max(startToCloseMs / 2, startToCloseMs - margin);
}

/** An endpoint for messages: no credentials, query or fragment. */
export function endpointLabel(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    url.username = '';
    url.password = '';
    url.search = '';
    url.hash = '';
    return url.toString().replace(/\/$/, '');
  } catch {
    return endpoint; // not a URL (an injected client): as given
  }
}

/**
 * The endpoint accepted the request and did not answer in time: retryable, unless `gaveUpAfter`
 * attempts have timed out, when retrying would only wait as long again.
 */
export function modelTimeout(endpoint: string, budgetMs: number, gaveUpAfter?: number): ApplicationFailure {
  const within = `${Number.isInteger(budgetMs / 1000) ? budgetMs / 1000 : (budgetMs / 1000).toFixed(1)} s`;
  const message = `the model endpoint ${endpoint} did not answer within ${within}`;
  return gaveUpAfter
    ? ApplicationFailure.nonRetryable(
        `${message} (${gaveUpAfter} attempts timed out; raise limits.modelTimeoutSec if the model needs longer)`,
        'MODEL_TIMEOUT',
      )
    : ApplicationFailure.retryable(message, 'MODEL_TIMEOUT');
}

/**
 * Converts an error thrown by the openai client into an ApplicationFailure with a type. A
 * retryable HTTP failure carries the wait the endpoint asked for (Retry-After) as its
 * nextRetryDelay, unbounded: model-retry.ts decides what to make of it.
 */
export function toModelFailure(err: unknown, endpoint: string): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof OpenAI.APIConnectionError) {
    // Includes the client's timeouts: the endpoint may be back on the next attempt.
    return ApplicationFailure.retryable(`model endpoint ${endpoint} unreachable: ${err.message}`, UNREACHABLE);
  }
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const location = err.status >= 300 && err.status < 400 ? err.headers?.get('location') : undefined;
    if (location) {
      // Not followed (http-fetch.ts): the request and its key go only where the endpoint was declared.
      return ApplicationFailure.nonRetryable(`model endpoint ${endpoint} redirects (HTTP ${err.status}) to ${oneLine(location)}; redirects are not followed: set its baseUrl to where it points`, 'MODEL_REQUEST_REJECTED');
    }
    const message = `model request failed with HTTP ${err.status}: ${providerMessage(err)}`;
    if (!isRetryableStatus(err.status)) return ApplicationFailure.nonRetryable(message, err.status === 400 ? 'MODEL_BAD_REQUEST' : 'MODEL_REQUEST_REJECTED');
    const wait = retryAfterMs(err.headers);
    return ApplicationFailure.create({ message, type: `MODEL_HTTP_${err.status}`, ...(wait !== undefined ? { nextRetryDelay: wait } : {}) });
  }
  const message = err instanceof Error ? err.message : String(err);
  return ApplicationFailure.retryable(`model call failed: ${oneLine(message)}`, 'MODEL_ERROR');
}

const UNREACHABLE = 'MODEL_UNREACHABLE';

/**
 * Whether a failure is the endpoint being rate-limited or out of service (429, 408, 5xx, no
 * connection): what providers do for tens of seconds at a time, retried over
 * limits.modelRetryWindowMs rather than a few quick attempts.
 */
export function isOutage(f: ApplicationFailure): boolean {
  if (f.type === UNREACHABLE) return true;
  const m = /^MODEL_HTTP_(\d{3})$/.exec(f.type ?? '');
  const status = m ? Number(m[1]) : 0;
  return status === 429 || status === 408 || status >= 500;
}

/** The words a live view uses for an outage failure: `rate limited (HTTP 429)`, `unavailable (HTTP 503)`, `unreachable`. */
export function outageWords(f: ApplicationFailure): string {
  if (f.type === UNREACHABLE) return 'unreachable';
  const status = f.type?.slice('MODEL_HTTP_'.length);
  return status === '429' ? 'rate limited (HTTP 429)' : `unavailable (HTTP ${status})`;
}

/**
 * The wait an endpoint asks for before the next request, in ms: `retry-after-ms` (OpenAI and
 * Azure send it), else `Retry-After` in seconds or as an HTTP date. Undefined when it asks for
 * none or says it in a form we cannot read.
 */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = headers?.get('retry-after-ms')?.trim();
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  // An HTTP date names its day and month (`Wed, 21 Oct 2015 07:28:00 GMT`); Date.parse takes "-3" too.
  const at = /[a-z]/i.test(value) ? Date.parse(value) : NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The provider's own words, not the SDK's prefix: one line, and short (an endpoint chooses them, and they go into history). */
function providerMessage(err: InstanceType<typeof OpenAI.APIError>): string {
  const body = err.error as { message?: unknown } | undefined;
  return oneLine(typeof body?.message === 'string' ? body.message : err.message);
}

/** Longest provider text a failure quotes. */
const MAX_PROVIDER_CHARS = 1_000;

function oneLine(text: string): string {
  const line = text.slice(0, MAX_PROVIDER_CHARS + 1).replace(/\s+/g, ' ').trim();
  return line.length > MAX_PROVIDER_CHARS ? `${line.slice(0, MAX_PROVIDER_CHARS)}…` : line;
}
