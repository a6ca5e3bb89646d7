/**
 * How a turn's pending model call is doing (attempt, endpoint, last failure, the outage it waits
 * out), read from the turn workflow's description on the server: what a waiting command says
 * about a slow model call. The attempt counts requests: a failed local attempt before the
 * activity (its heartbeat says how many) is one.
 */
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';

/** How the turn's pending model call is doing, from the turn workflow's description. */
export interface ModelProgress {
  /** The attempt running or about to run (1-based), counted as requests of the call. */
  attempt: number;
  /** Attempts allowed (limits.modelMaxAttempts; an outage is retried at least this often, and over its window); 0: unknown. */
  maxAttempts: number;
  /** The call waits out an outage: `rate limited (HTTP 429)`, `unavailable (HTTP 503)`, `unreachable`. */
  outage?: string;
  /** When the attempt goes out, while it waits (a Retry-After or the backoff). */
  nextAt?: Date;
  /** Until when the outage is retried (limits.modelRetryWindowSec from the call's first attempt). */
  retryUntil?: Date;
  /** The endpoint the worker calls (from the activity's heartbeat), when known yet. */
  endpoint?: string;
  /** Why the previous attempt failed, when one did. */
  lastFailure?: string;
  /** When the current attempt started (or was scheduled), for how long it has waited. */
  since?: Date;
}

/** The pending callModel activity of a turn, or undefined when the turn is not calling the model. */
export function modelProgress(d: WorkflowExecutionDescription): ModelProgress | undefined {
  const pending = d.raw.pendingActivities?.find((a) => a.activityType?.name === 'callModel');
  if (!pending) return undefined;
  const payload = pending.heartbeatDetails?.payloads?.[0];
  let details: Record<string, unknown> = {};
  if (payload) {
    try {
      details = (defaultPayloadConverter.fromPayload(payload) as Record<string, unknown> | null) ?? {};
    } catch {
      details = {}; // details from an older worker: go without
    }
  }
  const endpoint = text(details.endpoint);
  const since = timestamp(pending.lastStartedTime) ?? timestamp(pending.scheduledTime);
  // Between attempts Temporal says when the next goes out; before its first request, the attempt
  // waiting out a Retry-After its local attempt got says it in its heartbeat.
  const waiting = pending.state === PENDING_ACTIVITY_STATE_SCHEDULED ? timestamp(pending.nextAttemptScheduleTime) : undefined;
  const nextAt = waiting ?? epoch(details.nextAt);
  const outage = text(details.outage);
  const retryUntil = epoch(details.retryUntil);
  return {
    attempt: (pending.attempt || 1) + count(details.earlier),
    maxAttempts: maxAttempts(details, pending.maximumAttempts ?? 0),
    ...(endpoint ? { endpoint } : {}),
    ...(pending.lastFailure?.message ? { lastFailure: failureLine(pending.lastFailure) } : text(details.earlierFailure) ? { lastFailure: firstLine(text(details.earlierFailure)!) } : {}),
    ...(since ? { since } : {}),
    ...(outage && nextAt ? { outage, nextAt } : nextAt ? { nextAt } : {}),
    ...(outage && retryUntil ? { retryUntil } : {}),
  };
}

/**
 * The attempts allowed. The activity's maximumAttempts is only a cap (deterministic/model-retry.ts):
 * the limit is in its heartbeat. Details without it (a worker or a workflow from before the
 * limit was sent) leave Temporal's count as the bound, after the local attempt's; none yet: unknown.
 */
function maxAttempts(details: Record<string, unknown>, temporal: number): number {
  if ('maxAttempts' in details) return count(details.maxAttempts);
  return 'endpoint' in details && temporal > 0 ? temporal + count(details.earlier) : 0;
}

/** PendingActivityState.SCHEDULED: the activity waits for its next attempt (or a worker). */
const PENDING_ACTIVITY_STATE_SCHEDULED = 1;

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v ? v : undefined;
}

function count(v: unknown): number {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : 0;
}

function epoch(v: unknown): Date | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? new Date(v) : undefined;
}

/**
 * The last failure of an attempt in one line. A STORE_UNAVAILABLE failure (the worker could not
 * read or write the conversation in the message store, not a model problem) says so.
 */
function failureLine(f: { message?: string | null; applicationFailureInfo?: { type?: string | null } | null }): string {
  const line = firstLine(f.message ?? '');
  if (f.applicationFailureInfo?.type === 'STORE_UNAVAILABLE' && !/message store/.test(line)) return firstLine(`message store unavailable: ${line}`);
  return line;
}

function timestamp(t: { seconds?: unknown; nanos?: number | null } | null | undefined): Date | undefined {
  if (!t || t.seconds === undefined || t.seconds === null) return undefined;
  return new Date(Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6));
}

function firstLine(text: string, max = 160): string {
  const line = (text.split('\n')[0] ?? '').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
