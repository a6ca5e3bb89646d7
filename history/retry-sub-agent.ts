/**
 * `harness retry` of a sub-agent's turn. Its result went to the turn whose call started it when it
 * ended (a failure is the call's error, and that turn went on, or ended with it): resetting the
 * child in place would give its new result to no one, and its waits (approvals, questions) would
 * reach no session. So the child goes on as a new session of the sub-agent (its instructions,
 * tools, policy, model and limits, as its input carries them), forked at the step the retry of a
 * turn would reset to: the steps before are taken from the record, their model calls and tool
 * calls not made again, and the workspace is the child's as it began plus its recorded writes.
 */
import type { Client } from '@temporalio/client';
import { parseAgentTurnId } from '../deterministic/turn-id';
import { agentPathLabel } from '../deterministic/sub-agents';
import { UserError } from '../machine/errors';
import { planFork, type ForkPlan } from './fork';
import { resumePoint, type ResumePoint } from './retry';
import { noAgentTurn } from './unknown-turn';

/** A sub-agent's turn retried as a new session: the fork that does it, and where and why. */
export interface SubAgentRetryPlan extends ForkPlan {
  retry: {
    turnId: string;
    /** The turn the child's result went to. */
    parentTurnId: string;
    /** The agents from the session's down to the retried one. */
    agentPath: string[];
  } & Omit<ResumePoint, 'eventId'>;
}

/** Plans the retry of a sub-agent's turn; one that cannot be retried is a one-line UserError. */
export async function planSubAgentRetry(client: Client, turnId: string): Promise<SubAgentRetryPlan> {
  const agent = parseAgentTurnId(turnId);
  if (!agent) throw new UserError(`${turnId} is not a sub-agent's turn id`, "a sub-agent's turn is <session>/turn-N/agent-<call id> (see `harness trace <session>/turn-N`)", 2);
  const { point } = await resumePoint(client, turnId, {
    sessionId: agent.sessionId,
    cancelledHint: `go on from one of its steps in a new session: harness fork ${turnId} --at-step N`,
    missing: noAgentTurn(turnId)!,
  });
  let plan: ForkPlan;
  try {
    plan = await planFork(client, turnId, point.step);
  } catch (err) {
    // It ended before the model call of the step was made: the record has no conversation to go on from.
    if (err instanceof UserError && / has no step /.test(err.message)) {
      throw new UserError(`sub-agent turn ${turnId} ended before its model call of step ${point.step} (${point.why}): there is no step to go on from`, `retry the turn that called it: harness retry ${agent.rootTurnId}`);
    }
    throw err;
  }
  const agentPath = plan.agentPath ?? [];
  return { ...plan, retry: { turnId, parentTurnId: agent.parentTurnId, agentPath, step: point.step, why: point.why } };
}

/** The plan in words: that the child runs again as a new session, from which step, why, and what is not done again. */
export function subAgentRetryWords(plan: SubAgentRetryPlan, sessionId: string): string {
  const r = plan.retry;
  const k = plan.kept;
  const kept = k.steps
    ? `; step${k.steps > 1 ? `s 1–${k.steps}` : ' 1'} taken from the record (${k.modelCalls} model call${k.modelCalls === 1 ? '' : 's'} and ${k.toolCalls} tool call${k.toolCalls === 1 ? '' : 's'} not repeated)`
    : '';
  const who = r.agentPath.length ? ` of sub-agent ${agentPathLabel(r.agentPath)}` : '';
  return (
    `retrying ${r.turnId} from step ${r.step} (${r.why}) as the new session ${sessionId}${who}: ` +
    `its result went to ${r.parentTurnId} already and is not given to it again${kept}`
  );
}
