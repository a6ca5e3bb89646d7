/**
 * An eval trial's id where a session's is expected. A trial is a fresh session id, but the eval
 * runs it itself, so no workflow has that id: only its one turn, `<trial>/turn-1`, whose parent
 * is the eval. Commands given a trial's id say what it is instead of "no session named …".
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { UserError } from '../machine/errors';
import { formatTurnId } from '../deterministic/turn-id';

/** The turn of the eval trial with this id (a `<id>/turn-1` whose parent is not a session of that id), if there is one. */
export async function describeTrialTurn(client: Client, sessionId: string): Promise<WorkflowExecutionDescription | undefined> {
  try {
    const d = await client.workflow.getHandle(formatTurnId(sessionId, 1)).describe();
    return d.type === 'turnWorkflow' && d.parentExecution && d.parentExecution.workflowId !== sessionId ? d : undefined;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/** The one-line error for an id that names something other than a session (an eval trial, another workflow). */
export function notASession(sessionId: string, what: string): UserError {
  const trial = what === 'an eval trial' ? `its turn is ${formatTurnId(sessionId, 1)} (see \`harness trace ${formatTurnId(sessionId, 1)}\`); ` : '';
  return new UserError(`${sessionId} is ${what}, not a session`, `${trial}list sessions with \`harness sessions\`; \`harness sessions prune\` purges eval trials once they are over`);
}
