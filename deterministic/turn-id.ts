/**
 * Turn ids: turn n of a session is the workflow `<sessionId>/turn-<n>` (the session names its
 * turns so; an eval's trial is the session `<trialId>` whose one turn is `<trialId>/turn-1`).
 * A sub-agent's turn is `<parentTurnId>/agent-<callId>` (deterministic/sub-agents.ts starts them),
 * nested as deep as sub-agents nest: it belongs to the session and turn number of the turn it
 * hangs from. Every place that makes or reads one does it here. Pure: the workflow bundle may use it.
 */

/** What a turn id names: the session and the turn's number in it (from 1). */
interface TurnIdParts {
  sessionId: string;
  turn: number;
}

/** What a sub-agent's turn id names besides: the turn it hangs from, the call that started it, how deep it is. */
export interface AgentTurnIdParts extends TurnIdParts {
  /** The session's own turn at the top (`<session>/turn-<n>`). */
  rootTurnId: string;
  /** The turn whose call started it (the root turn, or another sub-agent's). */
  parentTurnId: string;
  callId: string;
  /** 1 for a sub-agent of the session's agent, 2 for one of that sub-agent … */
  depth: number;
}

/** How a turn id is read: strict (as a person must name one) or as history may hold it. */
interface TurnIdReading {
  /**
   * Only n from 1 with no leading zero, as the harness makes them, and call ids of letters,
   * digits, `.`, `_`, `-`: for ids a person types. Without it any digits pass, as readers of
   * history have always taken them.
   */
  strict?: boolean;
}

const TURN_ID = /^(.+)\/turn-(\d+)$/;
const SUB_AGENT_TURN = /^(.+)\/agent-([^/]+)$/;
/** The call ids the harness makes (`t1-s2-c0`), in the characters a person may type. */
const CALL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** The id of turn `turn` of session `sessionId`: `<sessionId>/turn-<turn>`. */
export function formatTurnId(sessionId: string, turn: number): string {
  return `${sessionId}/turn-${turn}`;
}

/** The session and number of a session's turn id; undefined for any other id (a session id, an eval id, a sub-agent's turn). */
export function parseTurnId(id: string, reading: TurnIdReading = {}): TurnIdParts | undefined {
  const m = TURN_ID.exec(id);
  if (!m || (reading.strict && m[2]!.startsWith('0'))) return undefined;
  return { sessionId: m[1]!, turn: Number(m[2]) };
}

/** Whether `id` names a session's turn (`<session>/turn-<n>`) rather than a session (or a sub-agent's turn). */
export function isTurnId(id: string, reading: TurnIdReading = {}): boolean {
  return parseTurnId(id, reading) !== undefined;
}

/** The workflow id of the child turn a call starts: `<parentTurnId>/agent-<callId>`. */
export function subAgentTurnId(parentTurnId: string, callId: string): string {
  return `${parentTurnId}/agent-${callId}`;
}

/** The parent turn and call of a child turn's id (one level, whatever the parent is); undefined for any other id. */
export function parseSubAgentTurnId(id: string): { parentTurnId: string; callId: string } | undefined {
  const m = SUB_AGENT_TURN.exec(id);
  return m ? { parentTurnId: m[1]!, callId: m[2]! } : undefined;
}

/** The turn of the session a (possibly nested) child turn belongs to: its id with every `/agent-…` taken off. */
export function rootTurnId(id: string): string {
  let at = id;
  for (let p = parseSubAgentTurnId(at); p; p = parseSubAgentTurnId(at)) at = p.parentTurnId;
  return at;
}

/**
 * A sub-agent's turn id, `<session>/turn-<n>/agent-<callId>` (nested: more `/agent-<callId>`),
 * whose root is a session's turn id; undefined for any other id.
 */
export function parseAgentTurnId(id: string, reading: TurnIdReading = {}): AgentTurnIdParts | undefined {
  const own = parseSubAgentTurnId(id);
  if (!own) return undefined;
  let at = id;
  let depth = 0;
  for (let p = parseSubAgentTurnId(at); p; p = parseSubAgentTurnId(at)) {
    if (reading.strict && !CALL_ID.test(p.callId)) return undefined;
    depth++;
    at = p.parentTurnId;
  }
  const root = parseTurnId(at, reading);
  return root ? { ...root, rootTurnId: at, parentTurnId: own.parentTurnId, callId: own.callId, depth } : undefined;
}

/** Whether `id` names a sub-agent's turn. */
export function isAgentTurnId(id: string, reading: TurnIdReading = {}): boolean {
  return parseAgentTurnId(id, reading) !== undefined;
}

/** A session's turn or a sub-agent's: its session and turn number, and where it hangs when it is a sub-agent's. */
export function parseAnyTurnId(id: string, reading: TurnIdReading = {}): (TurnIdParts & { agent?: AgentTurnIdParts }) | undefined {
  const agent = parseAgentTurnId(id, reading);
  return agent ? { sessionId: agent.sessionId, turn: agent.turn, agent } : parseTurnId(id, reading);
}

/** Whether `id` names a turn, a session's or a sub-agent's. */
export function isAnyTurnId(id: string, reading: TurnIdReading = {}): boolean {
  return parseAnyTurnId(id, reading) !== undefined;
}

/** The session a turn id (or a sub-agent's turn id) belongs to; any other id is returned as it is (a session names itself). */
export function sessionOfTurnId(id: string): string {
  return parseTurnId(rootTurnId(id))?.sessionId ?? id;
}

/** The number of a turn id (a sub-agent's turn: the number of the turn it hangs from); 0 for an id that names no turn. */
export function turnNumberOf(id: string): number {
  return parseTurnId(rootTurnId(id))?.turn ?? 0;
}
