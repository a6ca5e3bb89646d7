/**
 * The ids of sub-agents' child turns: `<parentTurnId>/agent-<callId>`. Apart from
 * deterministic/sub-agents.ts (which re-exports them) because that module loads zod for the tools'
 * parameters, and every CLI command reads turn ids through deterministic/turn-id.ts: reading an id
 * should not cost a CLI start-up ~50 ms of zod. Pure: the workflow bundle may use it.
 */

/** The workflow id of the child turn a call starts: `<parentTurnId>/agent-<callId>`. */
export function subAgentTurnId(parentTurnId: string, callId: string): string {
  return `${parentTurnId}/agent-${callId}`;
}

const SUB_AGENT_TURN = /^(.+)\/agent-([^/]+)$/;

/** The parent turn and call of a child turn's id; undefined for any other id. */
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
