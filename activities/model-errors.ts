/**
 * Maps provider errors onto Temporal retry semantics: transient ones (408, 409, 429, 5xx,
 * network) are retried by the activity's policy; any other 4xx is permanent and ends the
 * turn with the provider's own message.
 */
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';

const RETRYABLE_STATUS = new Set([408, 409, 429]);

/** Whether an HTTP status from a model endpoint is worth retrying. */
export function isRetryableStatus(status: number): boolean {
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

/** Converts an error thrown by the openai client into an ApplicationFailure with a type. */
export function toModelFailure(err: unknown, endpoint: string): ApplicationFailure {
  if (err instanceof ApplicationFailure) return err;
  if (err instanceof OpenAI.APIConnectionError) {
    // Includes timeouts: the endpoint may be back on the next attempt.
    return ApplicationFailure.retryable(`model endpoint ${endpoint} unreachable: ${err.message}`, 'MODEL_UNREACHABLE');
  }
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const message = `model request failed with HTTP ${err.status}: ${providerMessage(err)}`;
    return isRetryableStatus(err.status)
      ? ApplicationFailure.retryable(message, `MODEL_HTTP_${err.status}`)
      : ApplicationFailure.nonRetryable(message, 'MODEL_REQUEST_REJECTED');
  }
  const message = err instanceof Error ? err.message : String(err);
  return ApplicationFailure.retryable(`model call failed: ${oneLine(message)}`, 'MODEL_ERROR');
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
