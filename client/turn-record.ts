/**
 * What a turn itself says it waits for, read from its own history. A session learns of its
 * turns' waits from signals (`turnStatus`, `backgroundStatus`), which anyone who reaches the
 * Temporal server can send, naming a real call with made-up arguments, or a turn that is not
 * there. The statuses a turn sent are in its own history as commands of its code
 * (SignalExternalWorkflowExecutionInitiated), which no signal adds; and the server records who
 * started it. So a view of a wait reads the signals only to learn which turn to look at, and
 * shows what that turn said: its calls, their arguments and digests, its question, since when.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Pending, TurnState } from '../deterministic/session-state';
import type { TurnInput } from '../deterministic/session';
import { decodePayload, type HistoryEvent } from '../history/trace/events';
import { isCloseEvent } from '../history/trace/close-event';
import { parseSubAgentTurnId, sessionOfTurnId } from '../deterministic/turn-id';

/** A running turn of a session, as its own current run tells. */
export interface TurnRecord {
  /** What it last said it waits for (none: it said it runs, or said nothing yet), since when (ISO 8601). */
  waiting?: { pending: Pending; since: string };
  /** A sub-agent's path of agents, as its starter gave it. */
  path?: string[];
  /** The session a background sub-agent reports to, as its starter gave it (its memo). */
  backgroundOf?: string;
}

const STATUS_SIGNALS = new Set(['turnStatus', 'backgroundStatus']);
// gRPC's NOT_FOUND, which a history read of no such workflow fails with.
const NOT_FOUND = 5;

/** The status a turn has while it waits for `pending`. */
export function waitStatus(pending: Pending): 'waiting_for_user' | 'waiting_for_approval' | 'waiting_for_budget' {
  return pending.kind === 'question' ? 'waiting_for_user' : pending.kind === 'approvals' ? 'waiting_for_approval' : 'waiting_for_budget';
}

/** The event's time as ISO 8601. */
export function eventIso(t: HistoryEvent['eventTime']): string {
  return new Date(t ? Number(t.seconds ?? 0) * 1000 + Math.floor((t.nanos ?? 0) / 1e6) : 0).toISOString();
}

/**
 * The record of `turnId` when it is a running turn started within `sessionId` (by the session
 * or by one of its turns, as the server recorded its parent); undefined for anything else: no
 * such workflow, another kind, another session's, one started from outside, or a run that ended.
 */
export async function turnRecord(client: Client, sessionId: string, turnId: string): Promise<TurnRecord | undefined> {
  let events: HistoryEvent[];
  try {
    events = ((await client.workflow.getHandle(turnId).fetchHistory()).events ?? []) as HistoryEvent[];
  } catch (err) {
    // No such workflow is no turn of the session; any other failure (the server's trouble) is the caller's to wait out.
    if ((err as { code?: unknown }).code === NOT_FOUND || err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
  return readTurnRecord(events, sessionId, turnId);
}

/**
 * The wait a session heard of at `turnId` (its open turn, or a background sub-agent), as the turn
 * that waits says it: that turn itself or, for a wait that names its agent, one of its sub-agents
 * below it. Undefined when that is no running turn of this session, it says it waits for nothing,
 * or, for a `background` wait, no turn from it upwards was started as the session's background
 * sub-agent.
 */
export async function confirmedWait(client: Client, sessionId: string, turnId: string, claimed: Pending, background: boolean): Promise<{ pending: Pending; since: string } | undefined> {
  const leaf = claimed.agent?.turnId ?? turnId;
  if (leaf !== turnId && !leaf.startsWith(`${turnId}/`)) return undefined;
  const record = await turnRecord(client, sessionId, leaf);
  if (!record?.waiting) return undefined;
  if (background && !(await startedInBackground(client, sessionId, leaf, record))) return undefined;
  // Only a sub-agent's wait names its agents (a session's own turn has none).
  const agent = leaf !== turnId || background ? { agent: { turnId: leaf, path: record.path ?? [], ...(background ? { background: true as const } : {}) } } : {};
  return { pending: { ...record.waiting.pending, ...agent }, since: record.waiting.since };
}

/**
 * A turn's state (its query's answer) with the wait it passes on from a sub-agent below it as that
 * sub-agent says it: the turn heard of the wait by signal, which anyone who reaches the server can
 * send. A wait the sub-agent does not confirm is not shown, and the turn is running. The turn's
 * own waits are its code's and stand as they are.
 */
export async function withConfirmedWait(client: Client, turnId: string, state: TurnState): Promise<TurnState> {
  const claimed = state.pending;
  if (!claimed?.agent) return state;
  const wait = await confirmedWait(client, sessionOfTurnId(turnId), turnId, claimed, false);
  if (wait) return { ...state, pending: wait.pending, status: waitStatus(wait.pending) };
  const { pending: _unconfirmed, ...rest } = state;
  return { ...rest, status: state.status === 'done' ? 'done' : 'running' };
}

/**
 * The wait a session says it has (its state, or a row of `sessions`), as the waiting turn says it:
 * a background sub-agent's is looked for at that sub-agent, any other at the session's current turn.
 */
export async function confirmedSessionWait(client: Client, sessionId: string, currentTurnId: string | undefined, claimed: Pending): Promise<{ pending: Pending; since: string } | undefined> {
  const background = claimed.agent?.background === true;
  const at = background ? claimed.agent!.turnId : currentTurnId;
  return at ? confirmedWait(client, sessionId, at, claimed, background) : undefined;
}

/**
 * The turn a session's wait is decided at: a background sub-agent's own turn (the turn that
 * started it may be gone) when that sub-agent confirms the wait, else the session's current turn.
 */
export async function waitingTurnOf(client: Client, sessionId: string, state: { currentTurnId?: string; pending?: Pending }): Promise<string | undefined> {
  const claimed = state.pending;
  if (claimed?.agent?.background && (await confirmedSessionWait(client, sessionId, state.currentTurnId, claimed))) return claimed.agent.turnId;
  return state.currentTurnId;
}

/**
 * Where a decision of what `turnId` shows goes: the sub-agent turn below it whose wait it passes
 * on, or the turn itself; undefined when the wait names a turn elsewhere (a turn hears of its
 * sub-agents' waits by signal, which anyone can send).
 */
export function decidedAt(turnId: string, pending: Pending | undefined): string | undefined {
  const at = pending?.agent?.turnId ?? turnId;
  return at === turnId || at.startsWith(`${turnId}/`) ? at : undefined;
}

/** Whether `turnId` or a sub-agent turn above it was started as a background sub-agent of `sessionId` (its memo). */
async function startedInBackground(client: Client, sessionId: string, turnId: string, record: TurnRecord | undefined): Promise<boolean> {
  for (let id = turnId, r = record; ; ) {
    if (r?.backgroundOf === sessionId) return true;
    const up = parseSubAgentTurnId(id)?.parentTurnId;
    // The session's own turns are never background.
    if (!up || !parseSubAgentTurnId(up)) return false;
    id = up;
    r = await turnRecord(client, sessionId, id);
  }
}

/** turnRecord from the history of the turn's current run. */
export function readTurnRecord(events: readonly HistoryEvent[], sessionId: string, turnId: string): TurnRecord | undefined {
  const start = events[0]?.workflowExecutionStartedEventAttributes;
  if (start?.workflowType?.name !== 'turnWorkflow') return undefined;
  const parent = start.parentWorkflowExecution?.workflowId;
  if (!parent || (parent !== sessionId && !parent.startsWith(`${sessionId}/`))) return undefined;
  if (events.some(isCloseEvent)) return undefined;
  let waiting: TurnRecord['waiting'];
  for (const e of events) {
    const sent = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
    if (!sent?.signalName || !STATUS_SIGNALS.has(sent.signalName)) continue;
    const s = decodePayload(sent.input?.payloads?.[0]) as { turnId?: unknown; status?: unknown; pending?: Pending } | undefined;
    // A turn also passes on its sub-agents' statuses: only its own say what it waits for.
    if (s?.turnId !== turnId) continue;
    const waits = s.pending && s.status !== 'running' && s.status !== 'idle';
    // The same kind of wait said again (calls decided one by one) still waits since its first.
    waiting = waits ? { pending: s.pending!, since: waiting && waiting.pending.kind === s.pending!.kind ? waiting.since : eventIso(e.eventTime) } : undefined;
  }
  const input = decodePayload(start.input?.payloads?.[0]) as Partial<TurnInput> | undefined;
  const path = input?.subAgent?.path;
  const backgroundOf = decodePayload(start.memo?.fields?.backgroundOf);
  return {
    ...(waiting ? { waiting } : {}),
    ...(Array.isArray(path) && path.every((p) => typeof p === 'string') ? { path } : {}),
    ...(typeof backgroundOf === 'string' ? { backgroundOf } : {}),
  };
}
