/**
 * Each session's own state for `harness sessions` and the console, read from history (no worker
 * needed, nothing replayed): idle, running step N, waiting for approval, an answer or a budget
 * decision, or closed (ended, failed, terminated …); turns, tokens, the last task and when it
 * last did something. Visibility lists the sessions; a session's current run (small: a dozen
 * events a turn, continued as new past limits.continueAsNewAfterEvents) tells the rest, with
 * the first event of its latest turn (the task) and, while a turn runs, that turn's newest events.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import type { Payload } from '@temporalio/common';
import type { SessionCarry, TerminatedBy, TurnResult } from '../deterministic/session';
import type { Pending, Sleeping } from '../deterministic/session-state';
import type { Usage } from '../deterministic/types';
import { decodePayload, modelStepOf, type HistoryEvent } from '../history/trace/events';
import { parseTurnId } from '../deterministic/turn-id';
import { SCHEDULE_MEMO } from '../deterministic/schedule';
import { confirmedWait, waitStatus } from './turn-record';

/** A session's state as `harness sessions` shows it. */
export type SessionRowState = 'idle' | 'running' | 'waiting_for_approval' | 'waiting_for_user' | 'waiting_for_budget' | 'ended' | 'failed' | 'terminated' | 'timed_out' | 'cancelled';

/** One session of the list. */
export interface SessionRow {
  session_id: string;
  state: SessionRowState;
  /** The task queue the session's worker polls. */
  task_queue: string;
  /** The step the running turn is at. */
  step?: number;
  turns: number;
  current_turn?: string;
  last_task?: string;
  /** How the last finished turn ended (`final_answer`, `failed` …). */
  last_outcome?: string;
  pending?: Pending;
  /** The running turn sleeps in a `wait` call: until when, and why. */
  sleeping?: Sleeping;
  usage: Usage;
  model?: string;
  started_at: string;
  /** The newest event of the session or its running turn (ISO 8601). */
  last_activity_at: string;
  /** The schedule whose firing started the session (`harness schedule`). */
  schedule?: string;
}

const CLOSED: Record<string, SessionRowState> = { COMPLETED: 'ended', FAILED: 'failed', TERMINATED: 'terminated', TIMED_OUT: 'timed_out', CANCELLED: 'cancelled', CANCELED: 'cancelled' };

/** The sessions visibility lists (newest first, at most `limit`), each with its state; of every task queue unless given some. */
export async function listSessions(client: Client, opts: { limit: number; taskQueue?: string | readonly string[] }): Promise<SessionRow[]> {
  const infos: WorkflowExecutionInfo[] = [];
  const queues = typeof opts.taskQueue === 'string' ? [opts.taskQueue] : (opts.taskQueue ?? []);
  const quoted = (q: string) => `'${q.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const queue = queues.length ? ` AND (${queues.map((q) => `TaskQueue = ${quoted(q)}`).join(' OR ')})` : '';
  for await (const wf of client.workflow.list({ query: `WorkflowType = 'sessionWorkflow'${queue}` })) {
    // A continued run is listed beside its successor: the latest run speaks for the session.
    if (wf.status.name === 'CONTINUED_AS_NEW' || infos.some((i) => i.workflowId === wf.workflowId)) continue;
    infos.push(wf);
    if (infos.length >= opts.limit) break;
  }
  const rows: SessionRow[] = [];
  // A few at a time: each is a handful of small reads.
  for (let i = 0; i < infos.length; i += 4) rows.push(...(await Promise.all(infos.slice(i, i + 4).map((wf) => sessionRow(client, wf)))));
  return rows;
}

/** One session's row from its latest run (visibility) and history. */
async function sessionRow(client: Client, wf: Pick<WorkflowExecutionInfo, 'workflowId' | 'runId' | 'status' | 'startTime' | 'taskQueue' | 'memo'>): Promise<SessionRow> {
  const events = await runEvents(client, wf.workflowId, wf.runId);
  const s = readSession(events);
  const row: SessionRow = {
    session_id: wf.workflowId,
    state: CLOSED[wf.status.name] ?? 'idle',
    task_queue: wf.taskQueue,
    turns: s.turns,
    usage: s.usage,
    ...(s.model ? { model: s.model } : {}),
    ...(s.lastOutcome ? { last_outcome: s.lastOutcome } : {}),
    started_at: wf.startTime.toISOString(),
    last_activity_at: new Date(s.lastAt || wf.startTime.getTime()).toISOString(),
    ...(typeof wf.memo?.[SCHEDULE_MEMO] === 'string' ? { schedule: wf.memo[SCHEDULE_MEMO] } : {}),
  };
  if (s.latestTurn) {
    // The session's history holds its latest turn's start and its input: no call to the turn for it.
    const task = s.latestTask ?? (await turnTask(client, s.latestTurn));
    if (task !== undefined) row.last_task = task;
  }
  if (wf.status.name !== 'RUNNING' || !s.openTurn) return row;
  row.current_turn = s.openTurn;
  row.state = 'running';
  // What the turn waits for as it says it (turn-record.ts): the session heard of it by signal, which anyone can send.
  const waiting = s.waiting?.pending ? await confirmedWait(client, wf.workflowId, s.openTurn, s.waiting.pending, false) : undefined;
  if (waiting) {
    row.state = waitStatus(waiting.pending);
    row.pending = waiting.pending;
  }
  if (s.sleeping) row.sleeping = s.sleeping;
  const progress = await turnProgress(client, s.openTurn);
  if (progress.step) row.step = progress.step;
  if (progress.lastAt > Date.parse(row.last_activity_at)) row.last_activity_at = new Date(progress.lastAt).toISOString();
  return row;
}

/** What a session's run says: its turns, the open one and what it waits for, its usage and model. */
interface SessionFacts {
  turns: number;
  latestTurn?: string;
  /** The latest turn's task, from the input its start in this run carries. */
  latestTask?: string;
  openTurn?: string;
  waiting?: { status: string; pending?: Pending };
  sleeping?: Sleeping;
  usage: Usage;
  model?: string;
  lastOutcome?: string;
  /** The last finished turn as its result tells it (none yet in this run, or it failed without one: only the outcome). */
  lastTurn?: { turnId: string; terminated_by: TerminatedBy; answer: string; steps: number };
  lastAt: number;
}

const NO_USAGE: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

const plus = (a: Usage, b: Partial<Usage> | undefined, sign = 1): Usage => ({
  prompt_tokens: a.prompt_tokens + sign * (b?.prompt_tokens ?? 0),
  completion_tokens: a.completion_tokens + sign * (b?.completion_tokens ?? 0),
  total_tokens: a.total_tokens + sign * (b?.total_tokens ?? 0),
});

/**
 * Reads a session run's events, oldest first. A turn `harness retry` runs again is no child
 * of the session any more: the session accepts a `retryTurn` update, waits for the reset run in
 * an `awaitTurnRun` activity and adopts its result, whose usage counts the whole turn and so
 * replaces the failed run's (as the session's own book does).
 */
export function readSession(events: readonly HistoryEvent[]): SessionFacts {
  const facts: SessionFacts = { turns: 0, usage: NO_USAGE, lastAt: 0 };
  // What the last finished turn added to the usage: a retry's result takes its place.
  let lastUsage: Partial<Usage> | undefined;
  const retries = new Map<string, string>();
  // Decoded once, for the latest turn only (a turn's input holds its config and may be large).
  let latestInput: Payload | null | undefined;
  const close = (turnId: string | undefined) => {
    if (turnId !== facts.openTurn) return;
    facts.openTurn = undefined;
    facts.waiting = undefined;
    facts.sleeping = undefined;
  };
  const finished = (r: TurnResult) => {
    facts.usage = plus(facts.usage, r.usage);
    lastUsage = r.usage;
    facts.lastOutcome = r.terminated_by;
    facts.lastTurn = { turnId: r.turnId, terminated_by: r.terminated_by, answer: r.answer ?? '', steps: r.steps ?? 0 };
  };
  for (const e of events) {
    facts.lastAt = Math.max(facts.lastAt, ms(e.eventTime));
    const started = e.workflowExecutionStartedEventAttributes;
    if (started) {
      const input = decodePayload(started.input?.payloads?.[0]) as { carry?: SessionCarry; config?: { model?: { provider?: string; model?: string } } } | undefined;
      facts.turns = input?.carry?.turnCount ?? 0;
      facts.usage = plus(NO_USAGE, input?.carry?.usage);
      // A run continued as new still knows how its last turn ended (and what it used, for a retry).
      const last = input?.carry?.lastTurn;
      if (last) {
        facts.lastOutcome = last.terminated_by;
        lastUsage = last.usage;
      }
      const m = input?.config?.model;
      if (m?.model) facts.model = `${m.provider}:${m.model}`;
    }
    const child = e.startChildWorkflowExecutionInitiatedEventAttributes;
    if (child?.workflowId) {
      facts.latestTurn = facts.openTurn = child.workflowId;
      latestInput = child.input?.payloads?.[0];
      facts.waiting = undefined;
      const n = parseTurnId(child.workflowId)?.turn;
      if (n !== undefined) facts.turns = Math.max(facts.turns, n);
    }
    const closed =
      e.childWorkflowExecutionCompletedEventAttributes ??
      e.childWorkflowExecutionFailedEventAttributes ??
      e.childWorkflowExecutionTerminatedEventAttributes ??
      e.childWorkflowExecutionTimedOutEventAttributes ??
      e.childWorkflowExecutionCanceledEventAttributes;
    if (closed) close(closed.workflowExecution?.workflowId ?? undefined);
    const done = e.childWorkflowExecutionCompletedEventAttributes;
    if (done) {
      const result = decodePayload(done.result?.payloads?.[0]) as TurnResult | undefined;
      if (result) finished(result);
    }
    if (closed && !done) {
      // The session records such a turn as failed, with no usage.
      facts.lastOutcome = 'failed';
      lastUsage = undefined;
      const turnId = closed.workflowExecution?.workflowId;
      if (turnId) facts.lastTurn = { turnId, terminated_by: 'failed', answer: 'The turn workflow did not complete.', steps: 0 };
    }
    // `harness retry`: the session takes the last turn back; it runs again until its reset run ends.
    const update = e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
    if (update?.name === 'retryTurn' && facts.latestTurn) {
      facts.openTurn = facts.latestTurn;
      facts.waiting = undefined;
    }
    const scheduled = e.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'awaitTurnRun') {
      const turnId = (decodePayload(scheduled.input?.payloads?.[0]) as { workflowId?: string } | undefined)?.workflowId;
      if (turnId) {
        retries.set(String(e.eventId), turnId);
        if (facts.openTurn !== turnId) facts.waiting = undefined;
        facts.openTurn = turnId;
      }
    }
    const ended = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes ?? e.activityTaskCanceledEventAttributes;
    const retried = ended ? retries.get(String(ended.scheduledEventId)) : undefined;
    if (retried) {
      const out = decodePayload(e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]) as { result?: TurnResult } | undefined;
      if (out?.result) {
        // The reset run's totals count the whole turn: the failed run's are taken out first.
        facts.usage = plus(facts.usage, lastUsage, -1);
        finished(out.result);
      }
      close(retried);
    }
    const signal = e.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName === 'turnStatus') {
      const s = decodePayload(signal.input?.payloads?.[0]) as { turnId?: string; status?: string; pending?: Pending; sleeping?: Sleeping } | undefined;
      if (s?.turnId === facts.openTurn) facts.waiting = s?.status && s.status !== 'running' && s.status !== 'idle' ? { status: s.status, ...(s.pending ? { pending: s.pending } : {}) } : undefined;
      if (s?.turnId === facts.openTurn) facts.sleeping = s?.sleeping;
    }
  }
  const task = taskOf(decodePayload(latestInput));
  if (task !== undefined) facts.latestTask = task;
  return facts;
}

/** Every event of one run (a session's run is small). */
export async function runEvents(client: Client, workflowId: string, runId: string): Promise<HistoryEvent[]> {
  const history: History = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  return (history.events ?? []) as HistoryEvent[];
}

// A turn's task never changes: read once per process.
const tasks = new Map<string, string>();

/** How much of a turn's task a row carries. */
const TASK_PREVIEW = 200;

/** The task a row shows from a turn's input: its user message, shortened (a list shows what it was about; a task may be 64 KiB). */
function taskOf(input: unknown): string | undefined {
  const message = (input as { userMessage?: unknown } | undefined)?.userMessage;
  if (typeof message !== 'string') return undefined;
  return message.length > TASK_PREVIEW ? `${message.slice(0, TASK_PREVIEW)}…` : message;
}

/** The user message a turn started with, from its first event. */
async function turnTask(client: Client, turnId: string): Promise<string | undefined> {
  if (tasks.has(turnId)) return tasks.get(turnId);
  try {
    const res = await client.workflowService.getWorkflowExecutionHistory({ namespace: client.options.namespace, execution: { workflowId: turnId }, maximumPageSize: 1 });
    const started = res.history?.events?.[0]?.workflowExecutionStartedEventAttributes;
    const task = taskOf(decodePayload(started?.input?.payloads?.[0]));
    if (task !== undefined) tasks.set(turnId, task);
    return task;
  } catch {
    return undefined; // past retention, or not started yet: the row goes without it
  }
}

/** The running turn's step (its newest model or compression call) and newest event time, from its last events. */
async function turnProgress(client: Client, turnId: string): Promise<{ step?: number; lastAt: number }> {
  try {
    const res = await client.workflowService.getWorkflowExecutionHistoryReverse({ namespace: client.options.namespace, execution: { workflowId: turnId }, maximumPageSize: 100 });
    const events = (res.history?.events ?? []) as HistoryEvent[];
    const lastAt = events.length ? ms(events[0]!.eventTime) : 0;
    for (const e of events) {
      const step = modelStepOf(e, ['callModel', 'compressContext']);
      if (step !== undefined) return { step, lastAt };
    }
    return { lastAt };
  } catch {
    return { lastAt: 0 };
  }
}

function ms(t: HistoryEvent['eventTime']): number {
  return t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0;
}
