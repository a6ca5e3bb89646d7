/**
 * Whether a failed model call attempt is worth another, and when (deterministic/model-retry.ts has
 * the bounds). The callModel activity asks after every failed attempt; Temporal's retry policy
 * only supplies the backoff and a cap, so the activity fails for good once the bounds are spent:
 *
 * - An outage (429, 408, 5xx, no connection: model-errors.ts isOutage) is retried until the
 *   retry window has passed since the call's first attempt, and at least `attempts` times.
 *   Within the window the next attempt waits what the endpoint asked (Retry-After), never less
 *   than the backoff, and the last one comes at the window's end. An endpoint that asks for
 *   longer than the window has left ends the call now: retrying sooner would be refused again,
 *   and waiting would overrun the window. Past the window (or with none), a Retry-After of up to
 *   MAX_ASKED_PAST_WINDOW_MS is waited, a longer one ends the call.
 * - Any other retryable failure (a timeout, a malformed reply, the message store down) has
 *   `attempts` attempts, as the call always had.
 */
import type { Context, Info } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { msOptionalToNumber } from '@temporalio/common/lib/time';
import type { EarlierAttempt, ModelCallInput } from '../../deterministic/activity-types';
import { backoffMs, type ModelRetry } from '../../deterministic/model-retry';
import { isOutage, outageWords } from './errors';

/** Past the retry window (or with none), the longest Retry-After a call still waits. */
export const MAX_ASKED_PAST_WINDOW_MS = 60_000;

/** Where a call stands when an attempt failed. */
interface AttemptState {
  /** Requests of the call so far, this one included (a failed local attempt counts). */
  attempt: number;
  /** This activity's own attempt (Temporal's count, which its backoff follows). */
  activityAttempt: number;
  /** Time since the call's first attempt. */
  elapsedMs: number;
  /** The bounds the workflow sent; absent from workflows before them (Temporal's maximumAttempts then bounds the call). */
  retry?: ModelRetry;
}

/** What the activity throws: the failure, retryable or not, and when the next attempt goes out. */
interface RetryVerdict {
  failure: unknown;
  /** The wait before the next attempt, when this one is retried. */
  nextMs?: number;
  /** The outage is retried until this long after the call's first attempt (for live views). */
  windowLeftMs?: number;
}

/** The failure of an attempt as the activity throws it: retried within the bounds, permanent past them. */
export function decideRetry(err: unknown, s: AttemptState): RetryVerdict {
  if (err instanceof CancelledFailure) return { failure: err };
  if (err instanceof ApplicationFailure && err.nonRetryable) return { failure: err };
  const failure = err instanceof ApplicationFailure ? err : undefined;
  const asked = msOptionalToNumber(failure?.nextRetryDelay ?? undefined);
  if (!s.retry) {
    // An older workflow's call: its own attempts, a Retry-After waited up to a minute.
    return asked === undefined ? { failure: err } : { failure: again(failure!, Math.min(asked, MAX_ASKED_PAST_WINDOW_MS)), nextMs: Math.min(asked, MAX_ASKED_PAST_WINDOW_MS) };
  }
  if (!failure || !isOutage(failure)) return s.attempt < s.retry.attempts ? { failure: err } : { failure: final(err, '') };
  const backoff = backoffMs(s.activityAttempt);
  const wait = Math.max(asked ?? 0, backoff);
  const left = s.retry.windowMs - s.elapsedMs;
  const windowSec = secs(s.retry.windowMs);
  if (left > 0) {
    if (asked !== undefined && asked > left) {
      return { failure: final(failure, `; the endpoint asks to wait ${secs(asked)}, longer than is left of the ${windowSec} retry window (limits.modelRetryWindowSec)`) };
    }
    const next = Math.min(wait, left);
    return { failure: again(failure, next), nextMs: next, windowLeftMs: left };
  }
  if (s.attempt >= s.retry.attempts) {
    const over = s.retry.windowMs > 0 ? ` over ${secs(s.elapsedMs)} (limits.modelRetryWindowSec: ${windowSec})` : '';
    return { failure: final(failure, `; gave up after ${s.attempt} attempts${over}`) };
  }
  if (asked !== undefined && asked > MAX_ASKED_PAST_WINDOW_MS) return { failure: final(failure, `; the endpoint asks to wait ${secs(asked)}`) };
  return asked === undefined ? { failure, nextMs: backoff } : { failure: again(failure, wait), nextMs: wait };
}

/** The failure, retried after `ms`. */
function again(f: ApplicationFailure, ms: number): ApplicationFailure {
  return copy(f, { nonRetryable: false, nextRetryDelay: Math.max(1, Math.round(ms)) });
}

/** The failure for good, with why it is not tried again; a failure from elsewhere keeps its words and gets a type. */
function final(err: unknown, why: string): ApplicationFailure {
  if (err instanceof ApplicationFailure) return copy(err, { nonRetryable: true, message: `${err.message}${why}` });
  const e = err instanceof Error ? err : new Error(String(err));
  return ApplicationFailure.create({ message: `${e.message}${why}`, type: e.name || 'Error', nonRetryable: true, cause: e });
}

function copy(f: ApplicationFailure, change: { nonRetryable: boolean; nextRetryDelay?: number; message?: string; details?: unknown[] }): ApplicationFailure {
  const details = change.details ?? f.details;
  return ApplicationFailure.create({
    message: change.message ?? f.message,
    ...(f.type ? { type: f.type } : {}),
    nonRetryable: change.nonRetryable,
    ...(details ? { details } : {}),
    ...(f.cause ? { cause: f.cause } : {}),
    ...(change.nextRetryDelay !== undefined ? { nextRetryDelay: change.nextRetryDelay } : {}),
    ...(f.category ? { category: f.category } : {}),
  });
}

function secs(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

/** What a call's heartbeat says of an outage it waits out, for live views (client/model-progress.ts). */
export interface OutageProgress {
  /** How the last attempt failed: `rate limited (HTTP 429)`, `unavailable (HTTP 503)`, `unreachable`. */
  outage?: string;
  /** The outage is retried until then (epoch ms). */
  retryUntil?: number;
  /** The next request goes out then (epoch ms). */
  nextAt?: number;
}

/**
 * The failure an activity attempt throws (decideRetry); an outage it waits out is put in the
 * progress and heartbeated, so a view can say what the call waits for and until when.
 */
export function activityFailure(err: unknown, s: AttemptState, progress: OutageProgress, beat: () => void): unknown {
  const verdict = decideRetry(err, s);
  const f = verdict.failure;
  if (verdict.nextMs !== undefined && f instanceof ApplicationFailure && isOutage(f)) {
    const now = Date.now();
    Object.assign(progress, { outage: outageWords(f), nextAt: now + verdict.nextMs, retryUntil: verdict.windowLeftMs !== undefined ? now + verdict.windowLeftMs : undefined });
    beat();
  }
  return f;
}

/**
 * The failure a local attempt (the call's first, in the workflow task) throws: decided as an
 * activity's is, with the wait before the next request in its details, where the workflow reads
 * it for the activity that tries again (EarlierAttempt.retryAfterMs): Temporal cannot wait
 * between a local activity and an activity.
 */
export function localFailure(err: unknown, attempt: number, retry: ModelRetry | undefined): unknown {
  const verdict = decideRetry(err, { attempt, activityAttempt: attempt, elapsedMs: 0, ...(retry ? { retry } : {}) });
  const f = verdict.failure;
  if (verdict.nextMs === undefined || !(f instanceof ApplicationFailure)) return f;
  const [first, ...rest] = f.details ?? [];
  const details = [{ ...(first && typeof first === 'object' ? first : {}), retryAfterMs: verdict.nextMs }, ...rest];
  return copy(f, { nonRetryable: false, details, ...(f.nextRetryDelay !== undefined ? { nextRetryDelay: msOptionalToNumber(f.nextRetryDelay ?? undefined) } : {}) });
}

/**
 * How long the activity after a failed local attempt waits before its first request: what the
 * local attempt's failure asked for, at most half the attempt's time (the request needs the rest).
 */
function earlierWaitMs(earlier: EarlierAttempt | undefined, info: Pick<Info, 'attempt' | 'startToCloseTimeoutMs'>): number {
  const asked = earlier?.retryAfterMs;
  if (info.attempt !== 1 || typeof asked !== 'number' || !(asked > 0)) return 0;
  return Math.min(asked, (info.startToCloseTimeoutMs ?? Infinity) / 2);
}

/**
 * Waits what earlierWaitMs says (cancellable: the activity's sleep), saying in the heartbeat what
 * for and until when; returns how long, which the attempt's own deadline gives up.
 */
export async function waitAsAsked(input: Pick<ModelCallInput, 'earlier' | 'retry'>, ctx: Context, progress: OutageProgress, beat: () => void): Promise<number> {
  const pause = earlierWaitMs(input.earlier, ctx.info);
  if (pause <= 0) return 0;
  const retryUntil = input.retry ? ctx.info.scheduledTimestampMs + input.retry.windowMs : undefined;
  Object.assign(progress, { nextAt: Date.now() + pause, outage: earlierOutage(input.earlier), retryUntil });
  beat();
  await ctx.sleep(pause);
  return pause;
}

/** An earlier attempt's failure in a live view's words, when it was an outage (its message as model-errors.ts writes it). */
function earlierOutage(earlier: EarlierAttempt | undefined): string | undefined {
  const failure = earlier?.failure ?? '';
  const status = /\bHTTP (\d{3})\b/.exec(failure)?.[1];
  const f = status ? ApplicationFailure.create({ type: `MODEL_HTTP_${status}` }) : undefined;
  if (f) return isOutage(f) ? outageWords(f) : undefined;
  return /\bunreachable\b/.test(failure) ? 'unreachable' : undefined;
}
