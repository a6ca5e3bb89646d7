/**
 * The `wait` tool's arguments, checked against the turn's clock, and what the model reads when
 * the wait ends. Pure: the turn workflow gives it workflow time (Date.now() in a workflow is the
 * time of the workflow task, the same on replay).
 *
 * A wait longer than the bound (limits.maxWaitMs) is refused, not clamped: a clamped wait would
 * end before the time the model asked for, and a model that reads "done" may act as though that
 * time had come. Refused, the model reads the bound and can wait that long, then again.
 */
import { toolError, toolOk } from './errors';
import type { ToolResult } from './types';

/** Longest a `wait` call may sleep when the session's limits name no maxWaitMs: a day. */
export const DEFAULT_MAX_WAIT_MS = 24 * 60 * 60 * 1000;

/** Longest reason the model may give (it is shown by `status` and kept in the turn's state). */
export const MAX_WAIT_REASON = 500;

/** A checked wait: until when (ms since the epoch, workflow time), for how long, and why. */
export interface WaitPlan {
  untilMs: number;
  ms: number;
  reason: string;
}

/** How a wait ended: its timer fired, or someone woke it (`harness wake`) with an optional reason. */
export interface WaitEnd {
  woken?: { by?: string; reason?: string };
  /** Workflow time when it ended. */
  nowMs: number;
}

// An explicit zone: a time without one would be read in each worker's own zone (not deterministic).
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i;

const invalid = (message: string, suggestion: string): { error: ToolResult } => ({ error: toolError('INVALID_ARGUMENTS', message, { suggestion, recoverable: true }) });

/** The wait the arguments ask for, or the structured error the model reads instead. */
export function waitPlan(args: Record<string, unknown>, nowMs: number, maxMs: number): WaitPlan | { error: ToolResult } {
  const { seconds, until } = args;
  const reason = typeof args.reason === 'string' ? args.reason.trim() : '';
  const bound = `${Math.floor(maxMs / 1000)} seconds`;
  if (!reason) return invalid('wait needs a reason: say what you are waiting for.', 'e.g. {"seconds": 600, "reason": "the build to finish"}');
  if (reason.length > MAX_WAIT_REASON) return invalid(`the reason is ${reason.length} characters; at most ${MAX_WAIT_REASON}.`, 'say it in a sentence');
  if (seconds !== undefined && until !== undefined) return invalid('give either seconds or until, not both.', 'seconds: how long from now; until: an ISO 8601 time with its zone');
  if (seconds === undefined && until === undefined) return invalid('give seconds (how long from now) or until (an ISO 8601 time with its zone).', 'e.g. {"seconds": 600, "reason": "…"}');
  let untilMs: number;
  if (seconds !== undefined) {
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) return invalid(`seconds must be a positive number, not ${JSON.stringify(seconds)}.`, `wait between 1 and ${bound}`);
    untilMs = nowMs + Math.ceil(seconds * 1000);
  } else {
    const text = typeof until === 'string' ? until.trim() : '';
    const parsed = ISO_WITH_ZONE.test(text) ? Date.parse(text) : NaN;
    if (!Number.isFinite(parsed)) {
      return invalid(`until must be an ISO 8601 time with its zone, such as 2026-01-31T09:00:00Z; ${JSON.stringify(until)} is not one.`, `or give seconds; it is now ${isoOf(nowMs)}`);
    }
    if (parsed <= nowMs) return invalid(`until (${isoOf(parsed)}) is not in the future: it is now ${isoOf(nowMs)}.`, 'give a later time, or do not wait');
    untilMs = parsed;
  }
  const ms = untilMs - nowMs;
  if (ms > maxMs) {
    return invalid(
      `a wait may last at most ${bound} (limits.maxWaitSec); this one would last ${Math.ceil(ms / 1000)} seconds.`,
      `wait at most ${bound}, then wait again if you still need to`,
    );
  }
  return { untilMs, ms, reason };
}

/** The wait call's result: it slept the whole time, or was woken early (by whom and why, when given). */
export function waitResult(plan: WaitPlan, startMs: number, end: WaitEnd): ToolResult {
  const slept = Math.max(0, Math.round((end.nowMs - startMs) / 1000));
  const now = isoOf(end.nowMs);
  if (!end.woken) return toolOk({ woke: 'on_time', slept_seconds: slept, now });
  return toolOk({
    woke: 'early',
    slept_seconds: slept,
    now,
    planned_until: isoOf(plan.untilMs),
    ...(end.woken.by ? { woken_by: end.woken.by } : {}),
    ...(end.woken.reason ? { wake_reason: end.woken.reason } : {}),
  });
}

/** An instant given in milliseconds as ISO 8601 text: formats the time it is given, reads no clock. */
export function isoOf(ms: number): string {
  // eslint-disable-next-line no-restricted-syntax -- a Date made from a given instant, not the clock
  return new Date(ms).toISOString();
}
