/**
 * Turn ids: turn n of a session is the workflow `<sessionId>/turn-<n>` (the session names its
 * turns so; an eval's trial is the session `<trialId>` whose one turn is `<trialId>/turn-1`).
 * A sub-agent's turn is `<turnId>/agent-<callId>` (deterministic/sub-agents.ts): it belongs to the
 * session and turn number of the turn it hangs from. Every place that makes or reads one does it
 * here. Pure: the workflow bundle may use it.
 */
import { rootTurnId } from './sub-agent-ids';

/** What a turn id names: the session and the turn's number in it (from 1). */
interface TurnIdParts {
  sessionId: string;
  turn: number;
}

/** How a turn id is read: strict (as a person must name one) or as history may hold it. */
interface TurnIdReading {
  /**
   * Only n from 1 with no leading zero, as the harness makes them: for ids a person types.
   * Without it any digits pass, as readers of history have always taken them.
   */
  strict?: boolean;
}

const TURN_ID = /^(.+)\/turn-(\d+)$/;

/** The id of turn `turn` of session `sessionId`: `<sessionId>/turn-<turn>`. */
export function formatTurnId(sessionId: string, turn: number): string {
  return `${sessionId}/turn-${turn}`;
}

/** The session and number of a turn id; undefined for any other id (a session id, an eval id). */
export function parseTurnId(id: string, reading: TurnIdReading = {}): TurnIdParts | undefined {
  const m = TURN_ID.exec(id);
  if (!m || (reading.strict && m[2]!.startsWith('0'))) return undefined;
  return { sessionId: m[1]!, turn: Number(m[2]) };
}

/** Whether `id` names a turn (`<session>/turn-<n>`) rather than a session. */
export function isTurnId(id: string, reading: TurnIdReading = {}): boolean {
  return parseTurnId(id, reading) !== undefined;
}

/** The session a turn id (or a sub-agent's turn id) belongs to; any other id is returned as it is (a session names itself). */
export function sessionOfTurnId(id: string): string {
  return parseTurnId(rootTurnId(id))?.sessionId ?? id;
}

/** The number of a turn id (a sub-agent's turn: the number of the turn it hangs from); 0 for an id that names no turn. */
export function turnNumberOf(id: string): number {
  return parseTurnId(rootTurnId(id))?.turn ?? 0;
}
