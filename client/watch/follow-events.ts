/**
 * A turn's events as they happen, for a client anywhere Temporal is reachable: the turn's history
 * followed by long poll (follow.ts: getWorkflowExecutionHistory with waitNewEvent, so the server
 * answers as soon as an event is written, and nothing is asked of the worker), read into events
 * by turn-events.ts. Each event names its position in the history, so a client that lost its
 * connection asks again `from` the last event it saw and gets every later one, none twice.
 */
import type { Client } from '@temporalio/client';
import { UsageError, UserError } from '../../machine/errors';
import { formatTurnId, parseAnyTurnId, sessionOfTurnId, turnNumberOf } from '../../deterministic/turn-id';
import { noAgentTurn } from '../../history/unknown-turn';
import { HistoryFollower } from './follow';
import { turnsOf } from './live';
import { isAfter, TurnEventReader } from './turn-events';
import { isMark } from './call-marks';
import { ModelDeltas } from './model-deltas';
import type { ModelStreamSource } from './stream-source';
import type { EventPosition, HarnessEvent } from './event-types';
import type { Trouble } from '../wait-progress';

/** Where to follow from and how to stop. */
export interface EventOptions {
  /**
   * The turn (`<session>/turn-N`, or N, or a sub-agent's `<session>/turn-N/agent-<call id>`);
   * default: the session's latest turn (the one running, or the last that ran), waiting for its
   * first when it has none yet.
   */
  turnId?: string | number;
  /**
   * Only what comes after this: an event seen before (`from: event`: right after it), or an
   * offset (`from: event.offset`: after every event of that history event). Needs the turn the
   * event is of: the event's own `turnId`, or `turnId`.
   */
  from?: number | (EventPosition & { turnId?: string });
  /** Stops following: the iteration ends with the signal's reason. */
  signal?: AbortSignal;
  /** Temporal cannot be reached (the follow goes on trying); called with undefined once it can again. */
  onTrouble?: (t: Trouble | undefined) => void;
  /**
   * @internal Where streamed model text is read (HarnessClient.events opens the workers'
   * database, stream-source.ts); undefined: no model_text_delta events.
   */
  streams?: () => Promise<ModelStreamSource | undefined>;
}

/**
 * The events of a session's turn, in order, until the turn ends (the `final` event is the last).
 * While a model call runs, the text it streams comes as model_text_delta events between history's
 * (model-deltas.ts), read from the database the workers write to. An unknown session or turn is a
 * one-line UserError; Temporal being away is waited out.
 */
export async function* turnEvents(client: Client, sessionId: string, o: EventOptions = {}): AsyncGenerator<HarnessEvent, void, undefined> {
  if (typeof sessionId !== 'string' || sessionId === '') throw new UsageError('events() needs a session id');
  const turnId = await whichTurn(client, sessionId, o);
  const follower = new HistoryFollower(client, turnId, o.onTrouble);
  if (!(await follower.load(o.signal))) throw await unknownTurn(client, turnId);
  const type = follower.current()[0]?.workflowType;
  if (type && type !== 'turnWorkflow') throw new UsageError(`${turnId} is a ${type} workflow, not a turn`, 'name a turn as <session>/turn-N');
  const reader = new TurnEventReader(turnId);
  const deltas = new ModelDeltas(turnId, o.streams);
  const from = o.from;
  // The long poll goes on while streamed text is given; it stops with the iteration.
  const stop = new AbortController();
  const abort = () => stop.abort(o.signal?.reason);
  if (o.signal?.aborted) abort();
  o.signal?.addEventListener('abort', abort, { once: true });
  let polling: Promise<'changed' | 'closed'> | undefined;
  // Set once the workflow closed: what history holds is read once more, then the follow ends.
  let closed = false;
  try {
    for (;;) {
      for (const item of reader.readItems(follower.current())) {
        if (isMark(item)) {
          if (item.type === 'call_running') deltas.started(item);
          else for (const d of await deltas.ended(item)) if (isAfter(d, from)) yield d;
          continue;
        }
        if (isAfter(item, from)) yield item;
        if (item.type === 'final') return;
      }
      // Closed without a close event read (it cannot, but a reset may have left nothing to follow).
      if (closed) return;
      if (follower.closed) {
        closed = true;
        continue;
      }
      polling ??= follower.next(stop.signal);
      // A call runs: its text as it is stored, until history moves on.
      while (deltas.active) {
        for (const d of await deltas.poll()) if (isAfter(d, from)) yield d;
        const woke = await Promise.race([polling.then(() => 'history' as const), deltas.changed(stop.signal).then(() => 'text' as const)]);
        if (woke === 'history') break;
      }
      closed = (await polling) === 'closed';
      polling = undefined;
    }
  } finally {
    o.signal?.removeEventListener('abort', abort);
    stop.abort();
    polling?.catch(() => undefined);
    await deltas.close();
  }
}

/** The turn id the options name, checked against the session; the session's latest turn without one. */
async function whichTurn(client: Client, sessionId: string, o: EventOptions): Promise<string> {
  const fromTurn = typeof o.from === 'object' && o.from !== null ? o.from.turnId : undefined;
  const named = o.turnId ?? fromTurn;
  if (named !== undefined) {
    const turnId = typeof named === 'number' ? formatTurnId(sessionId, named) : named;
    const parts = parseAnyTurnId(turnId, { strict: true });
    if (!parts || !(parts.turn >= 1)) {
      throw new UsageError(`${String(named)} is not a turn id`, "a turn id is <session>/turn-N (N from 1) or a sub-agent's <session>/turn-N/agent-<call id>, or give the turn number N");
    }
    if (parts.sessionId !== sessionId) throw new UsageError(`turn ${turnId} is not of session ${sessionId}`, 'name a turn of this session, or leave turnId out for its latest');
    if (fromTurn !== undefined && fromTurn !== turnId) throw new UsageError(`from is an event of turn ${fromTurn}, not of ${turnId}`, 'resume with an event of the turn you follow');
    return turnId;
  }
  if (o.from !== undefined) throw new UsageError('from needs the turn its offset is of', 'pass the event itself (from: event) or its turnId as well');
  // The latest turn, from the session's history: no worker has to answer.
  const session = new HistoryFollower(client, sessionId, o.onTrouble);
  if (!(await session.load(o.signal))) throw noSession(sessionId);
  const type = session.current()[0]?.workflowType;
  if (type && type !== 'sessionWorkflow') throw new UsageError(`${sessionId} is a ${type} workflow, not a session`, 'give a session id');
  for (;;) {
    const turns = turnsOf(session.current());
    if (turns.length) return turns[turns.length - 1]!;
    if (session.closed || (await session.next(o.signal)) === 'closed') {
      const last = turnsOf(session.current());
      if (last.length) return last[last.length - 1]!;
      throw new UserError(`session ${sessionId} ended without a turn`, 'send it a message in a new session');
    }
  }
}

/** Why a turn Temporal does not know cannot be followed: no such session, or no such turn in it. */
async function unknownTurn(client: Client, turnId: string): Promise<UserError> {
  const agent = noAgentTurn(turnId);
  if (agent) return agent;
  const sessionId = sessionOfTurnId(turnId);
  const session = new HistoryFollower(client, sessionId);
  if (!(await session.load())) return noSession(sessionId);
  const turns = turnsOf(session.current());
  const have = turns.length ? `it has turns 1 to ${Math.max(...turns.map(turnNumberOf))}` : 'it has no turn yet';
  return new UserError(`session ${sessionId} has no turn ${turnNumberOf(turnId)} (${have})`, 'Temporal keeps histories for its retention period (24 hours on the embedded dev server)');
}

function noSession(sessionId: string): UserError {
  return new UserError(`no session ${sessionId} in Temporal`, '`harness sessions` lists sessions; Temporal keeps histories for its retention period (24 hours on the embedded dev server)');
}
