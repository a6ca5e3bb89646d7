/**
 * History events as the trace reads them: the few kinds it needs, with their payloads decoded by
 * the default payload converter (the worker uses no other) and their times in milliseconds.
 * Everything else in a history (workflow tasks, search attributes, patch markers) is dropped.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { History, Payload } from '@temporalio/common/lib/proto-utils';
import { boundDepth, bytesNestDeeper, MAX_PAYLOAD_DEPTH } from './bounded';

/** One raw event of a history. */
export type HistoryEvent = NonNullable<History['events']>[number];
type RawFailure = NonNullable<HistoryEvent['activityTaskFailedEventAttributes']>['failure'];

/** An event the trace uses. `id` is the event id within its run; `at` milliseconds since the epoch. */
export type TraceEvent = { id: number; at: number } & (
  | { kind: 'started'; workflowType: string; input: unknown; continuedFrom?: string; parent?: string }
  | { kind: 'scheduled'; activityType: string; input: unknown }
  | { kind: 'activityStarted'; scheduledId: number; attempt: number; lastFailure?: string; identity: string }
  | { kind: 'activityCompleted'; scheduledId: number; result: unknown }
  | { kind: 'activityFailed'; scheduledId: number; failure: string; timedOut: boolean; details?: unknown }
  | { kind: 'activityCanceled'; scheduledId: number }
  | { kind: 'localActivity'; activityType: string; attempt: number; seq?: number; scheduledAt?: number; completedAt?: number; result?: unknown; failure?: string }
  | { kind: 'updateAccepted'; updateId: string; name: string; identity: string; args: unknown }
  | { kind: 'updateCompleted'; updateId: string; result?: unknown; failure?: string }
  | { kind: 'signaled'; name: string; input: unknown; identity: string }
  | { kind: 'signalSent'; name: string; input: unknown }
  | { kind: 'timerFired' }
  | { kind: 'childStarted'; workflowId: string; input: unknown }
  | { kind: 'closed'; status: 'completed' | 'failed' | 'terminated' | 'canceled' | 'timed_out' | 'continued_as_new'; result?: unknown; failure?: string }
);

/**
 * A payload's value, nested at most MAX_PAYLOAD_DEPTH levels (bounded.ts: whoever may signal a
 * workflow can put any JSON in its history); one the default converter cannot read is described
 * instead of failing the trace.
 */
export function decodePayload(p: Payload | null | undefined): unknown {
  if (!p) return undefined;
  try {
    const value: unknown = defaultPayloadConverter.fromPayload(p);
    return p.data && isJson(p) && bytesNestDeeper(p.data, MAX_PAYLOAD_DEPTH) ? boundDepth(value, MAX_PAYLOAD_DEPTH) : value;
  } catch {
    const enc = p.metadata?.encoding;
    return { undecodable: enc ? Buffer.from(enc).toString('utf8') : 'unknown encoding' };
  }
}

/** A payload of JSON text (the converter's `json/plain`). */
function isJson(p: Payload): boolean {
  const enc = p.metadata?.encoding;
  return enc !== undefined && enc !== null && Buffer.from(enc).toString('latin1') === 'json/plain';
}

function first(payloads: { payloads?: Payload[] | null } | null | undefined): unknown {
  return decodePayload(payloads?.payloads?.[0]);
}

/** A failure in one line: its message, its type, and the messages of its causes. */
export function failureText(f: RawFailure | null | undefined): string {
  const parts: string[] = [];
  for (let cur = f, depth = 0; cur && depth < 5; cur = cur.cause, depth++) {
    const type = cur.applicationFailureInfo?.type;
    const msg = cur.message ?? '';
    if (msg && !parts.some((p) => p.includes(msg))) parts.push(type ? `${msg} (${type})` : msg);
    else if (!msg && cur.timeoutFailureInfo) parts.push(`timed out (${timeoutName(cur.timeoutFailureInfo.timeoutType)})`);
  }
  return parts.join(': ') || 'failed';
}

/** The first details an application failure in the chain carries (a failed model call's waste, activities/usage-waste.ts). */
export function failureDetails(f: RawFailure | null | undefined): unknown {
  for (let cur = f, depth = 0; cur && depth < 5; cur = cur.cause, depth++) {
    const d = cur.applicationFailureInfo?.details?.payloads?.[0];
    if (d) return decodePayload(d);
  }
  return undefined;
}

function timeoutName(t: unknown): string {
  return ({ 1: 'start to close', 2: 'schedule to start', 3: 'schedule to close', 4: 'heartbeat' } as Record<number, string>)[Number(t)] ?? 'timeout';
}

/** A number from a proto field that may be a Long, a number or a string. */
const num = (v: unknown): number => (v && typeof v === 'object' && 'toNumber' in v ? (v as { toNumber(): number }).toNumber() : Number(v ?? 0));

/** Milliseconds of a proto timestamp. */
function tsMs(ts: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return ts ? num(ts.seconds) * 1000 + Math.floor(num(ts.nanos) / 1e6) : NaN;
}

/** What a local activity's marker says of it besides its result: attempt, times, type. */
interface MarkerData {
  seq?: number;
  attempt?: number;
  activity_type?: string;
  complete_time?: { seconds?: number; nanos?: number };
  original_schedule_time?: { seconds?: number; nanos?: number };
}

const markerTime = (t?: { seconds?: number; nanos?: number }) => (t?.seconds !== undefined ? tsMs(t) : undefined);

/** The marker a local activity leaves: its data (attempt, times, type) and result or failure. */
function localActivity(e: HistoryEvent, base: { id: number; at: number }): TraceEvent | undefined {
  const m = e.markerRecordedEventAttributes!;
  if (m.markerName !== 'core_local_activity') return undefined;
  const details = m.details ?? {};
  const data = (first(details.data) ?? {}) as MarkerData;
  return {
    ...base,
    kind: 'localActivity',
    activityType: data.activity_type ?? '',
    attempt: data.attempt ?? 1,
    ...(typeof data.seq === 'number' ? { seq: data.seq } : {}),
    ...(markerTime(data.original_schedule_time) !== undefined ? { scheduledAt: markerTime(data.original_schedule_time) } : {}),
    ...(markerTime(data.complete_time) !== undefined ? { completedAt: markerTime(data.complete_time) } : {}),
    ...(m.failure ? { failure: failureText(m.failure) } : { result: first(details.result) }),
  };
}

/** A model call that ran as a local activity and answered there: its request and reply, as an activity's events would hold them. */
interface LocalModelCall {
  input: Record<string, unknown>;
  result: Record<string, unknown>;
  attempt: number;
  /** When it was scheduled and answered (both within the workflow task that recorded it). */
  scheduledAt: number;
  completedAt: number;
}

/**
 * The model call a local activity's marker holds (turns since `local-model-call`), with the
 * request its result repeats; undefined for any other marker, and for a local attempt that failed
 * or was handed on: the callModel activity that follows it in history is then the call.
 */
export function localModelCall(e: HistoryEvent): LocalModelCall | undefined {
  const m = e.markerRecordedEventAttributes;
  if (m?.markerName !== 'core_local_activity' || m.failure) return undefined;
  const data = (first(m.details?.data) ?? {}) as MarkerData;
  // The type first: another marker's result (a tool's, maybe large) is not decoded.
  if (data.activity_type !== 'callModel') return undefined;
  return modelCallOf(
    {
      activityType: data.activity_type,
      attempt: data.attempt ?? 1,
      scheduledAt: markerTime(data.original_schedule_time),
      completedAt: markerTime(data.complete_time),
      result: first(m.details?.result),
    },
    tsMs(e.eventTime),
  );
}

/**
 * A decoded local activity as the model call it holds, if it does. The marker's completion time
 * can precede its schedule time (as call-matching.ts's localEnd notes); then the reply's own
 * latency says when it came, within the workflow task that recorded it (`at`).
 */
function modelCallOf(local: { activityType: string; attempt: number; scheduledAt?: number; completedAt?: number; result?: unknown; failure?: string }, at: number): LocalModelCall | undefined {
  if (local.activityType !== 'callModel' || local.failure !== undefined) return undefined;
  const result = local.result as Record<string, unknown> | undefined;
  const request = result?.request;
  if (!request || typeof request !== 'object') return undefined;
  const { request: _request, ...reply } = result;
  const start = local.scheduledAt ?? at;
  const done = local.completedAt !== undefined && local.completedAt >= start ? local.completedAt : Math.min(at, start + (Number(reply.latencyMs) || 0));
  return { input: request as Record<string, unknown>, result: reply, attempt: local.attempt, scheduledAt: start, completedAt: Math.max(start, done) };
}

/**
 * The step of the model call (or, with `compressContext` in `types`, the compression) an event
 * schedules or, as a local activity's marker, holds; undefined for any other event.
 */
export function modelStepOf(e: HistoryEvent, types: readonly string[] = ['callModel']): number | undefined {
  const a = e.activityTaskScheduledEventAttributes;
  const input = a ? (types.includes(a.activityType?.name ?? '') ? (first(a.input) as { step?: unknown } | undefined) : undefined) : localModelCall(e)?.input;
  return typeof input?.step === 'number' ? input.step : undefined;
}

/**
 * The attempt an activity's start counts as: a model call that a failed local attempt handed to
 * the activity counts on from it (its input's `earlier`).
 */
export function countedAttempt(input: unknown, attempt: number): number {
  const earlier = (input as { earlier?: { attempts?: unknown } } | undefined)?.earlier?.attempts;
  return typeof earlier === 'number' && earlier > 0 ? attempt + earlier : attempt;
}

/** Decodes the events of one run that the trace uses, in history order. */
export function decodeEvents(events: readonly HistoryEvent[]): TraceEvent[] {
  const out: TraceEvent[] = [];
  for (const e of events) {
    const base = { id: num(e.eventId), at: tsMs(e.eventTime) };
    const ev = decodeEvent(e, base);
    // A model call answered in a local activity reads as the activity it stands for.
    const model = ev?.kind === 'localActivity' ? modelCallOf(ev, base.at) : undefined;
    if (model) {
      out.push(
        { id: base.id, at: model.scheduledAt, kind: 'scheduled', activityType: 'callModel', input: model.input },
        { id: base.id, at: model.scheduledAt, kind: 'activityStarted', scheduledId: base.id, attempt: model.attempt, identity: '' },
        { id: base.id, at: model.completedAt, kind: 'activityCompleted', scheduledId: base.id, result: model.result },
      );
      continue;
    }
    if (ev) out.push(ev);
  }
  return out;
}

function decodeEvent(e: HistoryEvent, base: { id: number; at: number }): TraceEvent | undefined {
  if (e.workflowExecutionStartedEventAttributes) {
    const a = e.workflowExecutionStartedEventAttributes;
    return {
      ...base,
      kind: 'started',
      workflowType: a.workflowType?.name ?? '',
      input: first(a.input),
      ...(a.continuedExecutionRunId ? { continuedFrom: a.continuedExecutionRunId } : {}),
      ...(a.parentWorkflowExecution?.workflowId ? { parent: a.parentWorkflowExecution.workflowId } : {}),
    };
  }
  if (e.activityTaskScheduledEventAttributes) {
    const a = e.activityTaskScheduledEventAttributes;
    return { ...base, kind: 'scheduled', activityType: a.activityType?.name ?? '', input: first(a.input) };
  }
  if (e.activityTaskStartedEventAttributes) {
    const a = e.activityTaskStartedEventAttributes;
    return {
      ...base,
      kind: 'activityStarted',
      scheduledId: num(a.scheduledEventId),
      attempt: a.attempt ?? 1,
      identity: a.identity ?? '',
      ...(a.lastFailure ? { lastFailure: failureText(a.lastFailure) } : {}),
    };
  }
  if (e.activityTaskCompletedEventAttributes) {
    const a = e.activityTaskCompletedEventAttributes;
    return { ...base, kind: 'activityCompleted', scheduledId: num(a.scheduledEventId), result: first(a.result) };
  }
  if (e.activityTaskFailedEventAttributes) {
    const a = e.activityTaskFailedEventAttributes;
    const details = failureDetails(a.failure);
    return { ...base, kind: 'activityFailed', scheduledId: num(a.scheduledEventId), failure: failureText(a.failure), timedOut: false, ...(details !== undefined ? { details } : {}) };
  }
  if (e.activityTaskTimedOutEventAttributes) {
    const a = e.activityTaskTimedOutEventAttributes;
    return { ...base, kind: 'activityFailed', scheduledId: num(a.scheduledEventId), failure: failureText(a.failure), timedOut: true };
  }
  if (e.activityTaskCanceledEventAttributes) {
    return { ...base, kind: 'activityCanceled', scheduledId: num(e.activityTaskCanceledEventAttributes.scheduledEventId) };
  }
  if (e.markerRecordedEventAttributes) return localActivity(e, base);
  if (e.workflowExecutionUpdateAcceptedEventAttributes) {
    const a = e.workflowExecutionUpdateAcceptedEventAttributes;
    const req = a.acceptedRequest;
    return {
      ...base,
      kind: 'updateAccepted',
      updateId: req?.meta?.updateId ?? a.protocolInstanceId ?? '',
      name: req?.input?.name ?? '',
      identity: req?.meta?.identity ?? '',
      args: first(req?.input?.args),
    };
  }
  if (e.workflowExecutionUpdateCompletedEventAttributes) {
    const a = e.workflowExecutionUpdateCompletedEventAttributes;
    const outcome = a.outcome;
    return {
      ...base,
      kind: 'updateCompleted',
      updateId: a.meta?.updateId ?? '',
      ...(outcome?.failure ? { failure: failureText(outcome.failure) } : { result: first(outcome?.success) }),
    };
  }
  if (e.workflowExecutionSignaledEventAttributes) {
    const a = e.workflowExecutionSignaledEventAttributes;
    return { ...base, kind: 'signaled', name: a.signalName ?? '', input: first(a.input), identity: a.identity ?? '' };
  }
  if (e.signalExternalWorkflowExecutionInitiatedEventAttributes) {
    const a = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
    return { ...base, kind: 'signalSent', name: a.signalName ?? '', input: first(a.input) };
  }
  if (e.timerFiredEventAttributes) return { ...base, kind: 'timerFired' };
  if (e.startChildWorkflowExecutionInitiatedEventAttributes) {
    const a = e.startChildWorkflowExecutionInitiatedEventAttributes;
    return { ...base, kind: 'childStarted', workflowId: a.workflowId ?? '', input: first(a.input) };
  }
  if (e.workflowExecutionCompletedEventAttributes) return { ...base, kind: 'closed', status: 'completed', result: first(e.workflowExecutionCompletedEventAttributes.result) };
  if (e.workflowExecutionFailedEventAttributes) return { ...base, kind: 'closed', status: 'failed', failure: failureText(e.workflowExecutionFailedEventAttributes.failure) };
  if (e.workflowExecutionTimedOutEventAttributes) return { ...base, kind: 'closed', status: 'timed_out', failure: 'the workflow timed out' };
  if (e.workflowExecutionCanceledEventAttributes) return { ...base, kind: 'closed', status: 'canceled' };
  if (e.workflowExecutionTerminatedEventAttributes) {
    const a = e.workflowExecutionTerminatedEventAttributes;
    return { ...base, kind: 'closed', status: 'terminated', failure: `terminated${a.reason ? `: ${a.reason}` : ''}${a.identity ? ` (by ${a.identity})` : ''}` };
  }
  if (e.workflowExecutionContinuedAsNewEventAttributes) return { ...base, kind: 'closed', status: 'continued_as_new' };
  return undefined;
}
