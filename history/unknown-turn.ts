/** What a command says of a sub-agent's turn id Temporal does not know (no trace builder loaded for it). */
import { UserError } from '../machine/errors';
import { parseAgentTurnId } from '../deterministic/turn-id';

/** For a sub-agent's turn id: the one-line error that it names no workflow, with where its parent's are named; undefined for any other id. */
export function noAgentTurn(id: string): UserError | undefined {
  const agent = parseAgentTurnId(id);
  if (!agent) return undefined;
  return new UserError(
    `no sub-agent turn ${id} in Temporal`,
    `\`harness trace ${agent.parentTurnId}\` names the sub-agents' turns its calls started; Temporal keeps histories for its retention period (24 hours on the embedded dev server)`,
  );
}
