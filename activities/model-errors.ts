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
  return ApplicationFailure.retryable(`model call failed: ${message}`, 'MODEL_ERROR');
}

/** The provider's own words, not the SDK's prefix. */
function providerMessage(err: InstanceType<typeof OpenAI.APIError>): string {
  const body = err.error as { message?: string } | undefined;
  return body?.message ?? err.message;
}
