/**
 * A turn's runs read for the ledger alone: the turn's input (its pricing), its model-call and
 * compression activities with their attempts and outcomes, and how it closed. The trace's reader
 * (history/trace/timeline.ts) decodes every payload of every event; this one decodes only these, so
 * the ledger of a long turn costs little more than fetching it. The result is a Timeline, which
 * the one ledger function (turnLedger) counts, as it counts the trace's.
 */
import type { TurnInput, TurnResult } from '../../deterministic/session';
import { countedAttempt, decodePayload, failureDetails, failureText, localModelCall, type HistoryEvent } from '../trace/events';
import type { ActivityItem, Timeline } from '../trace/timeline';
import { continueModelCall, reportedAttempt } from '../trace/model-calls';
import { resetBase } from '../workflow-runs';
import type { RawRun } from './fetch';
import { formatTurnId } from '../../deterministic/turn-id';

const COUNTED = new Set(['callModel', 'compressContext']);

/** The workflow type of a run (its first event), without decoding anything. */
export function workflowTypeOf(run: RawRun): string {
  return run.history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? '';
}

/** The runs a reset replaced are left out: the run the reset made holds their history up to its point. */
export function withoutResetBases(runs: RawRun[]): RawRun[] {
  const bases = new Set(runs.map((r) => resetBase(r.history.events)).filter(Boolean));
  return runs.filter((r) => !bases.has(r.runId));
}

/** Children a run started (a session's turns, an eval's trials), in order, without decoding their inputs. */
export function childrenOf(runs: RawRun[]): string[] {
  return unique(childStarts(runs).map((c) => c.workflowId));
}

/**
 * The turns of an eval's trials, one each: the eval's children are the turns themselves, or (an
 * eval from before it ran trials itself) trial workflows whose one turn is `<trial>/turn-1`.
 */
export function trialTurns(runs: RawRun[]): string[] {
  return unique(childStarts(runs).map((c) => (c.workflowType === 'turnWorkflow' ? c.workflowId : formatTurnId(c.workflowId, 1))));
}

/** Every child the runs started, in order. */
function childStarts(runs: RawRun[]): { workflowId: string; workflowType: string }[] {
  return runs.flatMap((r) =>
    (r.history.events ?? []).flatMap((e) => {
      const child = e.startChildWorkflowExecutionInitiatedEventAttributes;
      return child?.workflowId ? [{ workflowId: child.workflowId, workflowType: child.workflowType?.name ?? '' }] : [];
    }),
  );
}

const unique = (ids: string[]): string[] => [...new Set(ids)];

const num = (v: unknown): number => (v && typeof v === 'object' && 'toNumber' in v ? (v as { toNumber(): number }).toNumber() : Number(v ?? 0));
const first = (p: { payloads?: Parameters<typeof decodePayload>[0][] | null } | null | undefined) => decodePayload(p?.payloads?.[0]);

/** The ledger's view of a turn's runs (oldest first, reset bases left out). */
export function scanTurn(runs: RawRun[]): Timeline {
  const t: Timeline = { runs: runs.length, activities: [], executions: new Map(), waits: [], updates: [], mcpQuestions: [], records: new Map(), storedRecords: [], toolMessages: new Map() };
  for (const [i, run] of runs.entries()) {
    const scheduled = new Map<number, ActivityItem>();
    for (const e of run.history.events ?? []) scanEvent(t, e, scheduled, i === 0);
  }
  return t;
}

function scanEvent(t: Timeline, e: HistoryEvent, scheduled: Map<number, ActivityItem>, firstRun: boolean): void {
  const at = num(e.eventTime?.seconds) * 1000;
  if (firstRun && e.workflowExecutionStartedEventAttributes) t.input = first(e.workflowExecutionStartedEventAttributes.input) as TurnInput;
  if (e.markerRecordedEventAttributes) {
    // A model call answered in a local activity: one attempt, closed by its reply.
    const m = localModelCall(e);
    if (m) t.activities.push({ type: 'callModel', input: m.input, step: typeof m.input.step === 'number' ? m.input.step : 0, scheduledAt: m.scheduledAt, attempt: m.attempt, closedAt: m.completedAt, result: m.result });
    return;
  }
  const s = e.activityTaskScheduledEventAttributes;
  if (s && COUNTED.has(s.activityType?.name ?? '')) {
    const input = (first(s.input) ?? {}) as Record<string, unknown>;
    const item: ActivityItem = { type: s.activityType!.name!, input, step: typeof input.step === 'number' ? input.step : 0, scheduledAt: at };
    // A hand-off whose worker was gone and the activity that sent the call again are one call.
    if (item.type === 'callModel') continueModelCall(t.activities, item, undefined);
    scheduled.set(num(e.eventId), item);
    t.activities.push(item);
    return;
  }
  const started = e.activityTaskStartedEventAttributes;
  if (started) {
    const item = scheduled.get(num(started.scheduledEventId));
    if (item) item.attempt = countedAttempt(item.input, started.attempt ?? 1);
    return;
  }
  const done = e.activityTaskCompletedEventAttributes;
  if (done) {
    const item = scheduled.get(num(done.scheduledEventId));
    if (item) Object.assign(item, { closedAt: at, result: first(done.result) });
    return;
  }
  const failed = e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
  if (failed) {
    const item = scheduled.get(num(failed.scheduledEventId));
    const details = failureDetails(failed.failure);
    if (item) Object.assign(item, { closedAt: at, failure: failureText(failed.failure) }, details !== undefined ? { failureDetails: details } : {}, reportedAttempt(details));
    return;
  }
  const canceled = e.activityTaskCanceledEventAttributes;
  if (canceled) {
    const item = scheduled.get(num(canceled.scheduledEventId));
    if (item) Object.assign(item, { closedAt: at, canceled: true, failure: 'cancelled' });
    return;
  }
  if (e.workflowExecutionCompletedEventAttributes) t.closed = { at, status: 'completed', result: first(e.workflowExecutionCompletedEventAttributes.result) as TurnResult };
  else if (e.workflowExecutionFailedEventAttributes) t.closed = { at, status: 'failed' };
  else if (e.workflowExecutionTerminatedEventAttributes) t.closed = { at, status: 'terminated' };
  else if (e.workflowExecutionCanceledEventAttributes) t.closed = { at, status: 'canceled' };
  else if (e.workflowExecutionTimedOutEventAttributes) t.closed = { at, status: 'timed_out' };
}
