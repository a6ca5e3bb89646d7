/**
 * `harness retry`: a turn that failed (its model endpoint down past its retries) or was
 * terminated goes on from its last good point with the current code. Temporal resets the turn's
 * run to the workflow task that scheduled the failed model call (or to its last workflow task):
 * everything before that point is replayed from history, not executed again.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { TurnResult } from '../deterministic/session';
import { UserError } from '../machine/errors';
import { decodePayload, failureText, modelStepOf, type HistoryEvent } from './trace/events';
import { loadTrace } from './trace';
import { parseAgentTurnId, parseTurnId } from '../deterministic/turn-id';
import { callsBefore } from './trace/before-step';
import { describeWorkflow, workflowRuns } from './workflow-runs';
import { decodeRuns, type Run } from './trace/runs';

/** Where a retry resets the turn and what it keeps. */
interface RetryPlan {
  turnId: string;
  sessionId: string;
  turn: number;
  /** The run that is reset (the turn's latest). */
  runId: string;
  /** The WorkflowTaskCompleted event the run is reset to. */
  resetEventId: number;
  /** The step the retried run starts from. */
  step: number;
  /** Why the turn ended. */
  why: string;
  /** Completed model calls and tool calls of earlier steps: taken from history, not run again. */
  kept: { steps: number; modelCalls: number; toolCalls: number };
  /** The session whose last turn this is (a turn its session started); none for an eval's trial. */
  parent?: string;
}

/** Works out where to reset the turn; a turn that cannot be retried is a one-line UserError. */
export async function planRetry(client: Client, turnId: string): Promise<RetryPlan> {
  const m = parseTurnId(turnId);
  if (!m) {
    const agent = parseAgentTurnId(turnId);
    if (agent) throw new UserError(`${turnId} is a sub-agent's turn: its result went to ${agent.parentTurnId} already, and a reset cannot give it again`, 'retry it as a new session of the sub-agent (planSubAgentRetry; `harness retry` does)', 2);
    throw new UserError(`${turnId} is not a turn id`, 'a turn id is <session>/turn-N (see `harness status <session>`)', 2);
  }
  const { desc, raw, point } = await resumePoint(client, turnId, { sessionId: m.sessionId, cancelledHint: `send a new message with \`harness run --session ${m.sessionId} "<task>"\`` });
  const kept = await keptBefore(client, turnId, decodeRuns(turnId, raw), point.step);
  return {
    turnId,
    sessionId: m.sessionId,
    turn: m.turn,
    runId: desc.runId,
    resetEventId: point.eventId,
    step: point.step,
    why: point.why,
    kept,
    ...((await sessionParent(client, desc.parentExecution?.workflowId)) ?? {}),
  };
}

/** Where a turn that ended can go on from: the point its run is reset to, the step there and why the turn ended. */
export interface ResumePoint {
  eventId: number;
  step: number;
  why: string;
}

/**
 * Where the turn `turnId` would go on from, read from its history: its failed model call, or its
 * last workflow task; a turn still running, cancelled or done is a one-line UserError.
 */
export async function resumePoint(
  client: Client,
  turnId: string,
  o: { sessionId: string; cancelledHint: string; missing?: UserError },
): Promise<{ desc: NonNullable<Awaited<ReturnType<typeof describeWorkflow>>>; raw: Awaited<ReturnType<typeof workflowRuns>>; point: ResumePoint }> {
  const desc = await describeWorkflow(client, turnId);
  if (!desc) throw o.missing ?? new UserError(`no turn ${turnId} in Temporal`, '`harness status <session>` names its turns; Temporal keeps histories for its retention period');
  const status = desc.status.name;
  if (status === 'RUNNING') throw new UserError(`turn ${turnId} is still running`, `follow it with \`harness status ${o.sessionId}\`; retry is for a turn that failed`);
  if (status === 'CANCELLED') throw new UserError(`turn ${turnId} was cancelled`, o.cancelledHint);
  // Every run of the turn, fetched once: the last one's raw events place the reset, all of them
  // (decoded) tell what the steps before it did.
  const raw = await workflowRuns(client, turnId);
  const events = (raw.find((r) => r.runId === desc.runId)?.history.events ?? []) as HistoryEvent[];
  if (status !== 'COMPLETED') return { desc, raw, point: lastWorkflowTask(events, status.toLowerCase().replace('_', ' ')) };
  const result = decodePayload(events.at(-1)?.workflowExecutionCompletedEventAttributes?.result?.payloads?.[0]) as TurnResult;
  if (result.terminated_by !== 'failed') {
    throw new UserError(
      `turn ${turnId} ended with ${result.terminated_by}, not a failure: there is nothing to retry`,
      `to try another way from one of its steps: harness fork ${turnId} --at-step N`,
    );
  }
  return { desc, raw, point: failedModelCall(events, result) };
}

/**
 * The turn's parent when it is a session, which takes the retried turn back. An eval's trial
 * turn is reset on its own: the eval has no turn to take back (its report keeps the trial as run).
 */
async function sessionParent(client: Client, parent: string | null | undefined): Promise<{ parent: string } | undefined> {
  if (!parent) return undefined;
  return (await describeWorkflow(client, parent))?.type === 'sessionWorkflow' ? { parent } : undefined;
}

type ResetRequest = Parameters<Client['workflowService']['resetWorkflowExecution']>[0];

/** Resets the run; returns the id of the run that goes on. */
export async function resetTurn(client: Client, plan: RetryPlan): Promise<string> {
  const res = await client.workflowService.resetWorkflowExecution({
    namespace: client.options.namespace,
    workflowExecution: { workflowId: plan.turnId, runId: plan.runId },
    // An int64 field: protobufjs encodes a plain number as well as a Long.
    workflowTaskFinishEventId: plan.resetEventId as unknown as ResetRequest['workflowTaskFinishEventId'],
    reason: `harness retry from step ${plan.step}`,
    requestId: randomUUID(),
  });
  return res.runId ?? '';
}

/** The plan in words: from which step, why, and what is not done again. */
export function retryWords(plan: RetryPlan): string {
  const k = plan.kept;
  const kept = k.steps
    ? `; step${k.steps > 1 ? `s 1–${k.steps}` : ' 1'} kept from history (${k.modelCalls} model call${k.modelCalls === 1 ? '' : 's'} and ${k.toolCalls} tool call${k.toolCalls === 1 ? '' : 's'} not repeated)`
    : '';
  return `retrying ${plan.turnId} from step ${plan.step} (${plan.why})${kept}`;
}

/** A turn that returned `failed`: reset to the task that scheduled its last model call. */
function failedModelCall(events: HistoryEvent[], result: TurnResult): { eventId: number; step: number; why: string } {
  for (let i = events.length - 1; i >= 0; i--) {
    const a = events[i]!.activityTaskScheduledEventAttributes;
    if (a?.activityType?.name !== 'callModel') continue;
    const input = decodePayload(a.input?.payloads?.[0]) as { step?: number } | undefined;
    return {
      eventId: Number(a.workflowTaskCompletedEventId),
      step: input?.step ?? result.steps,
      why: `its model call failed: ${result.error ?? 'unknown error'}`,
    };
  }
  // The failure came before any model call in this run (preparing the turn): start it over.
  return { eventId: firstWorkflowTask(events), step: result.steps || 1, why: result.error ?? 'it failed' };
}

/**
 * A run that failed, was terminated or timed out: reset to its last completed workflow task. The
 * reset runs that task again and drops what it recorded (the markers of the model calls it ran
 * locally, a call it scheduled): the retried run starts at the first model call so dropped, or
 * else within the step of the last model call kept.
 */
function lastWorkflowTask(events: HistoryEvent[], status: string): { eventId: number; step: number; why: string } {
  const close = events[events.length - 1];
  const f = close?.workflowExecutionFailedEventAttributes?.failure ?? undefined;
  const reason = close?.workflowExecutionTerminatedEventAttributes?.reason;
  const why = f ? `it failed: ${failureText(f)}` : reason ? `it was ${status}: ${reason}` : `it was ${status}`;
  let eventId = 0;
  const calls: { id: number; step: number }[] = [];
  for (const e of events) {
    if (e.workflowTaskCompletedEventAttributes) eventId = Number(e.eventId);
    const step = modelStepOf(e);
    if (step !== undefined) calls.push({ id: Number(e.eventId), step });
  }
  if (!eventId) throw new UserError(`turn ${status} before its first workflow task: there is no point to resume from`, 'send the message again');
  const dropped = calls.find((c) => c.id > eventId);
  const kept = calls.filter((c) => c.id < eventId).at(-1);
  return { eventId, step: dropped?.step ?? kept?.step ?? 1, why };
}

function firstWorkflowTask(events: HistoryEvent[]): number {
  const e = events.find((x) => x.workflowTaskCompletedEventAttributes);
  if (!e) throw new UserError('the turn ended before its first workflow task: there is no point to resume from', 'send the message again');
  return Number(e.eventId);
}

/** What the steps before `step` did, from the trace of the turn (every run of it). */
async function keptBefore(client: Client, turnId: string, runs: Run[], step: number): Promise<RetryPlan['kept']> {
  const before = callsBefore((await loadTrace(client, turnId, { runs })).spans, step);
  return {
    steps: step - 1,
    modelCalls: before.filter((c) => c.span.type === 'llm_call' && c.span.status === 'ok').length,
    toolCalls: before.filter((c) => c.span.type === 'tool_call').length,
  };
}
