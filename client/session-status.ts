/**
 * A session's real state for `harness status`. A running session answers its `state` query
 * (through a worker); a closed one is described from its history, which needs no worker: a
 * failed, terminated, timed-out or ended session says so, with the reason and when. The query
 * alone would tell a failed session's state as it was when it failed (`idle`), as if it were
 * still there. A running session whose worker is gone (or does not answer at once) is described
 * from its history too, saying so: waiting for a worker to come back is `--follow`'s job, not
 * a question about where things stand.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { PendingApproval, SessionState, SessionStatus, TurnState } from '../deterministic/session-state';
import { stateQuery, turnStateQuery } from '../deterministic/messages';
import { UserError } from '../machine/errors';
import { describeTrialTurn, notASession } from './trial-ids';
import { lookUntil, type TroubleWait } from './trouble-wait';
import { addressOf, look, noWorker, seconds } from './wait-progress';
import { GONE_POLLER_MS, lastPoll, type LastPoll } from './worker-presence';
import { readSession, runEvents } from './session-list';
import { backgroundRunning } from './background-waits';
import { withSteps } from './background-status';
import { confirmedSessionWait, decidedAt, waitStatus, withConfirmedWait } from './turn-record';

/** How a session stands: `ended` by `harness end`, or closed by a failure, a termination or a timeout. */
export type SessionViewStatus = SessionStatus | 'failed' | 'terminated' | 'timed_out' | 'cancelled';

/** What `status` shows: the state query's answer, or for a closed session what its history says (and the query's details when a worker could give them). */
export type SessionView = Partial<Omit<SessionState, 'status'>> & {
  sessionId: string;
  status: SessionViewStatus;
  /** Why a closed session closed, in one line. */
  reason?: string;
  /** When it closed (ISO 8601). */
  closedAt?: string;
  /** Why turns, usage and the rest are missing for a closed session. */
  detailsMissing?: string;
};

/** How long a describe or a history read may take while waiting. */
const SERVER_MS = 10_000;
/** How long the state query may take (the server gives up at 30 s). */
const QUERY_MS = 30_000;
/** How long a closed session's details are waited for: they are extra, the status is already known. */
const CLOSED_QUERY_MS = 10_000;
/**
 * How long a running session's worker may take to answer `status` before history answers
 * instead: a worker that is there answers a query in milliseconds, and one that stopped a
 * moment ago still looks present to the server for a minute.
 */
const RUNNING_QUERY_MS = 1_500;

// temporal.api.enums.v1.HistoryEventFilterType.CLOSE_EVENT
const CLOSE_EVENT = 2;

/**
 * The session's view, waiting out Temporal's trouble with `troubleWait`. A running session's state
 * comes from its worker, or from history when no worker answers at once (`detailsMissing` says
 * so); `waitForWorker` waits for the worker instead (a caller that needs what only it knows).
 */
export async function sessionView(client: Client, sessionId: string, troubleWait: TroubleWait, opts: { waitForWorker?: boolean } = {}): Promise<SessionView> {
  const handle = client.workflow.getHandle(sessionId);
  for (;;) {
    let d: WorkflowExecutionDescription;
    try {
      d = await lookUntil(client, sessionId, 'server', () => handle.describe(), SERVER_MS, troubleWait);
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      if (await describeTrialTurn(client, sessionId).catch(() => undefined)) throw notASession(sessionId, 'an eval trial');
      throw new UserError(`no session named ${sessionId}`, 'list sessions with `harness sessions`');
    }
    if (d.type === 'evalCaseWorkflow') throw notASession(sessionId, 'an eval trial');
    if (d.type !== 'sessionWorkflow') throw new UserError(`${sessionId} is not a session (it is a ${d.type})`, 'list sessions with `harness sessions`');
    if (d.status.name === 'RUNNING' && opts.waitForWorker) return withOwnWait(client, (await lookUntil(client, sessionId, 'query', () => handle.query(stateQuery), QUERY_MS, troubleWait)) as SessionState);
    if (d.status.name === 'RUNNING') {
      const view = await withOwnWait(client, await runningView(client, d, troubleWait));
      const background = await withSteps(client, sessionId, view.background);
      const { background: _claimed, ...rest } = view;
      return background ? { ...rest, background } : rest;
    }
    // A run that continued as new was replaced between the describe and now: look again.
    if (d.status.name !== 'CONTINUED_AS_NEW') return closedView(client, d, troubleWait);
  }
}

/**
 * The view with its wait as the waiting turn says it (turn-record.ts): the session heard of it by
 * signal, which anyone who reaches the server can send. A wait its turn does not confirm is not
 * shown, and a session whose own turn was said to wait is shown running.
 */
async function withOwnWait<V extends SessionView | SessionState>(client: Client, view: V): Promise<V> {
  const claimed = view.pending;
  if (!claimed) return view;
  const wait = await confirmedSessionWait(client, view.sessionId, view.currentTurnId, claimed);
  // The session's own turn is in the state its wait says; a background sub-agent's leaves the session's as it is.
  if (wait) return { ...view, pending: wait.pending, ...(claimed.agent?.background ? {} : { status: waitStatus(wait.pending) }) };
  const { pending: _unconfirmed, ...rest } = view;
  const ownTurn = !claimed.agent?.background && view.currentTurnId;
  return (ownTurn && view.status.startsWith('waiting_for_') ? { ...rest, status: 'running' } : rest) as V;
}

/** The calls a session's current turn waits to have approved, as the turn itself says (none: `status` says what it is doing instead). */
export interface PendingApprovals {
  /** The session's status, or the turn's when there is a current turn. */
  status: string;
  /** The turn asked: the session's current turn, or the sub-agent turn whose wait the session's view confirmed. */
  turnId?: string;
  calls: PendingApproval[];
}

/**
 * What the session's current turn waits to have approved, asked of the turn (the session hears
 * of it a moment later), waiting out trouble with `troubleWait`. The CLI decides exactly these calls,
 * each with the digest read here, never "whatever is pending when the update arrives".
 */
export async function pendingApprovals(client: Client, sessionId: string, troubleWait: TroubleWait): Promise<PendingApprovals> {
  const view = await sessionView(client, sessionId, troubleWait, { waitForWorker: true });
  // A sub-agent's wait is asked of its own turn (a background one's starter may be gone): the
  // view's wait is already the one that turn confirmed (withOwnWait), so no history is read again.
  const turnId = view.pending?.agent ? view.pending.agent.turnId : view.currentTurnId;
  const open = ['running', 'waiting_for_user', 'waiting_for_approval', 'waiting_for_budget'].includes(view.status);
  if (!turnId || !open) return { status: view.status, calls: [] };
  const handle = client.workflow.getHandle(turnId);
  // A wait the view did not confirm that the current turn still claims for a sub-agent: as that sub-agent says it.
  const ts = await withConfirmedWait(client, turnId, (await lookUntil(client, turnId, 'query', () => handle.query(turnStateQuery), QUERY_MS, troubleWait)) as TurnState);
  const waits = ts.status === 'waiting_for_approval' && ts.pending?.kind === 'approvals' && decidedAt(turnId, ts.pending);
  return { status: ts.status, turnId, calls: waits && ts.pending?.kind === 'approvals' ? ts.pending.calls : [] };
}

/**
 * A running session: the state query's answer when a worker gives it at once; else what its
 * history says (status, current turn, what it waits for, turns, usage), naming the worker trouble.
 */
async function runningView(client: Client, d: WorkflowExecutionDescription, troubleWait: TroubleWait): Promise<SessionView> {
  const last = await lastPoll(client, d.taskQueue);
  // No poll for longer than a live worker's long poll lasts: no query can be answered.
  let trouble = last && (!last.polled || last.agoMs > GONE_POLLER_MS) ? noWorker(d.taskQueue, addressOf(client), last).text : undefined;
  while (!trouble) {
    const out = await look(client, d.workflowId, 'query', () => client.workflow.getHandle(d.workflowId).query(stateQuery), RUNNING_QUERY_MS);
    if (out.ok) {
      troubleWait.clear();
      return out.value as SessionState;
    }
    // Temporal's "no poller" and a last poll long ago name the task queue; a query unanswered
    // with a recent poll is a worker that just stopped, or one too busy to answer.
    if (out.trouble.kind === 'worker') trouble = out.trouble.text.includes(`task queue ${d.taskQueue}`) ? out.trouble.text : noAnswer(d.taskQueue, last);
    else await troubleWait.troubled(out.trouble);
  }
  const events = await lookUntil(client, d.workflowId, 'server', () => runEvents(client, d.workflowId, d.runId), SERVER_MS, troubleWait);
  const s = readSession(events);
  const background = backgroundRunning(events);
  return {
    sessionId: d.workflowId,
    status: s.openTurn ? ((s.waiting?.status as SessionViewStatus | undefined) ?? 'running') : 'idle',
    turnCount: s.turns,
    usage: s.usage,
    ...(s.model ? { model: s.model } : {}),
    ...(s.openTurn ? { currentTurnId: s.openTurn } : {}),
    ...(s.waiting?.pending ? { pending: s.waiting.pending } : {}),
    ...(s.sleeping ? { sleeping: s.sleeping } : {}),
    ...(s.lastTurn ? { lastTurn: s.lastTurn } : {}),
    ...(background.length ? { background } : {}),
    detailsMissing: `${trouble} — shown from history; working memory, MCP servers and the message count need a worker`,
  };
}

/** A worker of the task queue polled lately, yet none answered the state query in time. */
function noAnswer(taskQueue: string, last: LastPoll | undefined): string {
  const ago = last?.polled ? `its last poll began ${seconds(Math.round(last.agoMs / 1000) * 1000)} ago: ` : '';
  return `no worker of task queue ${taskQueue} answered within ${seconds(RUNNING_QUERY_MS)} (${ago}stopped, or too busy to answer)`;
}

/** A closed session: its status and reason from the close event, its details from the query when a worker is there. */
async function closedView(client: Client, d: WorkflowExecutionDescription, troubleWait: TroubleWait): Promise<SessionView> {
  const execution = { workflowId: d.workflowId, runId: d.runId };
  const namespace = client.options.namespace;
  const history = await lookUntil(
    client,
    d.workflowId,
    'server',
    () => client.workflowService.getWorkflowExecutionHistory({ namespace, execution, historyEventFilterType: CLOSE_EVENT, maximumPageSize: 1 }),
    SERVER_MS,
    troubleWait,
  );
  const close = history.history?.events?.at(-1);
  const view: SessionView = {
    sessionId: d.workflowId,
    status: 'ended',
    ...(d.closeTime ? { closedAt: d.closeTime.toISOString() } : {}),
  };
  if (close?.workflowExecutionFailedEventAttributes) {
    view.status = 'failed';
    view.reason = failureWords(close.workflowExecutionFailedEventAttributes.failure);
  } else if (close?.workflowExecutionTerminatedEventAttributes) {
    const t = close.workflowExecutionTerminatedEventAttributes;
    view.status = 'terminated';
    view.reason = `${t.reason || 'no reason given'}${t.identity ? ` (by ${t.identity})` : ''}`;
  } else if (close?.workflowExecutionTimedOutEventAttributes) {
    view.status = 'timed_out';
    view.reason = 'its run timeout passed';
  } else if (close?.workflowExecutionCanceledEventAttributes) {
    view.status = 'cancelled';
    view.reason = 'cancelled through Temporal';
  } else {
    const turns = decode<{ turns?: number }>(close?.workflowExecutionCompletedEventAttributes?.result?.payloads?.[0])?.turns;
    if (typeof turns === 'number') view.turnCount = turns;
    view.reason = (await whoEnded(client, execution)) ?? 'ended with `harness end`';
  }
  return { ...view, ...(await details(client, d, view)) };
}

/** The state query's details of a closed session (turns, usage, last turn), when a worker answers soon; else why not. */
async function details(client: Client, d: WorkflowExecutionDescription, view: SessionView): Promise<Partial<SessionView>> {
  const last = await lastPoll(client, d.taskQueue);
  if (!last?.polled || last.agoMs > GONE_POLLER_MS) return { detailsMissing: `turns and usage need a worker to read (none polls task queue ${d.taskQueue})` };
  try {
    const out = await look(client, d.workflowId, 'query', () => client.workflow.getHandle(d.workflowId, d.runId).query(stateQuery), CLOSED_QUERY_MS);
    if (out.ok) {
      const { status: _replayed, ...state } = out.value as SessionState;
      return { ...state, sessionId: view.sessionId };
    }
    return { detailsMissing: `turns and usage could not be read: ${out.trouble.text}` };
  } catch (err) {
    // A history today's code cannot replay, for one: the close event has said what matters.
    return { detailsMissing: `turns and usage could not be read: ${(err as Error).message.split('\n')[0]}` };
  }
}

interface FailureProto {
  message?: string | null;
  cause?: FailureProto | null;
  activityFailureInfo?: { activityType?: { name?: string | null } | null } | null;
}

/** A workflow failure in one line: the activity that failed, if one did, and the deepest cause's message. */
export function failureWords(failure: FailureProto | null | undefined): string {
  let activity: string | undefined;
  let message = '';
  for (let f = failure, depth = 0; f && depth < 10; f = f.cause, depth++) {
    activity ??= f.activityFailureInfo?.activityType?.name ?? undefined;
    if (f.message?.trim()) message = f.message.trim();
  }
  const line = (message.split('\n')[0] ?? '').slice(0, 300) || 'no message';
  return activity ? `its ${activity} activity failed: ${line}` : line;
}

/** Who ended the session and why, from the endSession update in its last run's history (read from the end, a few pages at most). */
async function whoEnded(client: Client, execution: { workflowId: string; runId: string }): Promise<string | undefined> {
  let nextPageToken: Uint8Array | undefined;
  try {
    for (let page = 0; page < 5; page++) {
      const res = await client.withDeadline(Date.now() + SERVER_MS, () =>
        client.workflowService.getWorkflowExecutionHistoryReverse({ namespace: client.options.namespace, execution, maximumPageSize: 200, nextPageToken }),
      );
      for (const e of res.history?.events ?? []) {
        const request = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
        if (request?.input?.name !== 'endSession') continue;
        const reason = decode<{ reason?: string }>(request.input.args?.payloads?.[0])?.reason;
        const who = request.meta?.identity;
        return `ended${who ? ` by ${who}` : ''}${typeof reason === 'string' && reason ? `: ${reason}` : ''}`;
      }
      if (!res.nextPageToken?.length) return undefined;
      nextPageToken = res.nextPageToken;
    }
  } catch {
    // Only the wording of the reason is lost.
  }
  return undefined;
}

function decode<T>(payload: Parameters<typeof defaultPayloadConverter.fromPayload>[0] | undefined | null): T | undefined {
  if (!payload) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(payload) as T;
  } catch {
    return undefined;
  }
}
