/**
 * What a schedule's firing carries (the start input of scheduledMessageWorkflow) and the ids it
 * makes. It reaches the worker through Temporal and is untrusted there, as a `run`'s is: the
 * message goes through the session's own update validator and a new session's config through
 * the session's start, the same path `harness run` takes.
 */
import type { SessionConfig } from './session-config';

/** One firing's message: to an existing session (`sessionId`), or to a new session started with `config`. */
export interface ScheduledMessage {
  scheduleId: string;
  text: string;
  maxSteps?: number;
  /** The existing session each firing sends to. */
  sessionId?: string;
  /** The configuration each firing's new session starts with (resolved when the schedule was made). */
  config?: SessionConfig;
}

/** What a firing did: the turn it started and how that turn ended. */
export interface ScheduledFiring {
  sessionId: string;
  turnId: string;
  outcome: string;
}

/** The memo key that marks a schedule, and a session a schedule started, as the harness's. */
export const SCHEDULE_MEMO = 'harnessSchedule';

/** A schedule id: it starts the ids of the sessions it starts, so it follows their rule, shorter. */
export const SCHEDULE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The workflow id a schedule's firings start under (Temporal appends the firing's time). */
export function firingWorkflowId(scheduleId: string): string {
  return `schedule-${scheduleId}`;
}

/**
 * The session a firing starts: the schedule's id and the firing's time as Temporal appended it
 * to the workflow id (`…-2026-12-07T09:00:00Z` → `<id>-20261207-090000`), so the sessions of a
 * schedule sort by firing; another id (a firing workflow started by hand) gives the run's prefix.
 */
export function firingSessionId(scheduleId: string, workflowId: string, runId: string): string {
  const t = /(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/.exec(workflowId);
  const stamp = t ? `${t[1]}${t[2]}${t[3]}-${t[4]}${t[5]}${t[6]}` : runId.replace(/[^A-Za-z0-9]/g, '').slice(0, 12);
  return `${scheduleId}-${stamp}`;
}

/** Why a firing's input cannot be taken (it was not made by the harness's client, or was altered), or undefined. */
export function scheduledMessageProblem(m: ScheduledMessage): string | undefined {
  if (typeof m?.scheduleId !== 'string' || !SCHEDULE_ID.test(m.scheduleId)) return 'the schedule id must be letters, digits, ".", "_" or "-" (at most 64)';
  if (typeof m.text !== 'string') return 'the message must be text';
  if (m.sessionId !== undefined && (typeof m.sessionId !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(m.sessionId))) return 'the session id is not one';
  if ((m.sessionId === undefined) === (m.config === undefined)) return 'a firing names either an existing session or a new session\'s config';
  return undefined;
}

/** The schedule a message came from, read from the update id a firing sends it under (`schedule-<id>-<time>/<run>`). */
export function scheduleOfUpdate(updateId: string): string | undefined {
  return /^schedule-([A-Za-z0-9][A-Za-z0-9._-]{0,63})-\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z\/[^/]+$/.exec(updateId)?.[1];
}
