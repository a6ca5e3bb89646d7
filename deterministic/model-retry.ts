/**
 * How a model call is retried, shared by the workflow (which sends it with each call and sets
 * Temporal's retry policy from it) and the callModel activity (which decides, attempt by
 * attempt, whether a failure is worth another one: activities/model/retry.ts).
 *
 * A rate limit (429), a server error (5xx), a 408 or an unreachable endpoint is retried until
 * `windowMs` has passed since the call's first attempt, and at least `attempts` times: providers
 * rate-limit for tens of seconds, far longer than a few quick attempts last. Any other retryable
 * failure has `attempts` attempts. Temporal's policy supplies the backoff below and a cap on
 * attempts (attemptCap) that only a worker lost again and again reaches: the activity itself
 * fails for good once its bounds are spent.
 */
import { DEFAULT_LIMITS, type Limits } from './session-config';

/** The bounds of one call's retries (limits.modelMaxAttempts, limits.modelRetryWindowMs). */
export interface ModelRetry {
  /** Attempts of a call whose failures are not rate limits or outages (and at least as many of those). */
  attempts: number;
  /** Rate limits and outages are retried until this long after the call's first attempt. */
  windowMs: number;
}

/** Temporal's backoff between attempts: 0.5 s, doubling, at most 30 s. */
export const MODEL_BACKOFF = { initialMs: 500, coefficient: 2, maximumMs: 30_000 } as const;

/** The bounds a session's limits give its model calls. */
export function modelRetry(limits: Limits): ModelRetry {
  return { attempts: Math.max(1, limits.modelMaxAttempts), windowMs: Math.max(0, limits.modelRetryWindowMs ?? DEFAULT_LIMITS.modelRetryWindowMs!) };
}

/** The wait after the `attempt`-th attempt of an activity failed (1-based), as Temporal's policy computes it. */
export function backoffMs(attempt: number): number {
  return Math.min(MODEL_BACKOFF.maximumMs, MODEL_BACKOFF.initialMs * MODEL_BACKOFF.coefficient ** Math.max(0, attempt - 1));
}

/**
 * The activity's maximumAttempts: the attempts, plus as many retries as start within the window
 * when each waits at least the backoff (the activity never retries sooner), plus one. A failure
 * the activity never sees (its worker lost, Temporal's own timeout) is retried up to it.
 */
export function attemptCap(r: ModelRetry): number {
  // Failures at 0, 0.5, 1.5, 3.5 … s each start a retry while inside the window.
  let retries = 0;
  for (let at = 0; at < r.windowMs; at += backoffMs(retries)) retries += 1;
  return r.attempts + retries + 1;
}
