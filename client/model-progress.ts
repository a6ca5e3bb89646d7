/**
 * How a turn's pending model call is doing (attempt, endpoint, last failure), read from the turn
 * workflow's description on the server: what a waiting command says about a slow model call.
 */
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';

/** How the turn's pending model call is doing, from the turn workflow's description. */
export interface ModelProgress {
  /** The attempt running or about to run (1-based). */
  attempt: number;
  /** Attempts allowed (0: unlimited). */
  maxAttempts: number;
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
  const details = pending.heartbeatDetails?.payloads?.[0];
  let endpoint: string | undefined;
  if (details) {
    try {
      endpoint = (defaultPayloadConverter.fromPayload(details) as { endpoint?: unknown })?.endpoint as string | undefined;
    } catch {
      endpoint = undefined; // details from an older worker: go without
    }
  }
  const since = timestamp(pending.lastStartedTime) ?? timestamp(pending.scheduledTime);
  return {
    attempt: pending.attempt || 1,
    maxAttempts: pending.maximumAttempts || 0,
    ...(typeof endpoint === 'string' && endpoint ? { endpoint } : {}),
    ...(pending.lastFailure?.message ? { lastFailure: failureLine(pending.lastFailure) } : {}),
    ...(since ? { since } : {}),
  };
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
