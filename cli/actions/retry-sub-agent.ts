/**
 * What `harness retry` does with a sub-agent's turn (history/retry-sub-agent.ts says why): it
 * goes on as a new session of the sub-agent, from the step a retry would reset to.
 */
import type { Client } from '@temporalio/client';
import { newSessionId } from '../../api/send-options';
import { planSubAgentRetry, subAgentRetryWords } from '../../history/retry-sub-agent';
import { startForked } from '../../client/fork-start';
import { formatTurnId } from '../../deterministic/turn-id';
import type { CliContext } from '../context';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { printJson, say } from '../output';
import { driveTurn } from '../wait';
import { terminalPrompter } from '../prompter';
import type { RetryFlags } from './retry';

export async function retrySubAgent(ctx: CliContext, client: Client, turnId: string, o: RetryFlags): Promise<void> {
  const plan = await planSubAgentRetry(client, turnId);
  const sessionId = newSessionId();
  const state = await startForked(client, ctx.settings.taskQueue, plan, sessionId);
  const turn = formatTurnId(sessionId, 1);
  // Words on stderr; with --json, stdout holds one object: the plan (--no-wait) or the new turn's result.
  say(escapeForTerminal(subAgentRetryWords(plan, sessionId)));
  if (state?.fork?.seeded) say(`seeded with ${state.fork.seeded} file${state.fork.seeded === 1 ? '' : 's'} of the workspace as the sub-agent's turn began`);
  if (state?.fork?.restored.length) say(escapeForTerminal(`restored: ${state.fork.restored.join(', ')}`));
  for (const p of [...(state?.fork?.problems ?? []), ...plan.notRestored]) say(escapeForTerminal(`not restored: ${p}`));
  if (!o.wait) {
    const r = plan.retry;
    if (o.json) printJson({ turn_id: turn, session_id: sessionId, retry_of: r.turnId, parent_turn_id: r.parentTurnId, step: r.step, why: r.why, kept: plan.kept });
    return;
  }
  const json = Boolean(o.json);
  const prompter = terminalPrompter(json);
  process.exitCode = await driveTurn(await ctx.harness(), sessionId, turn, { json, waitTimeoutMs: o.waitTimeout * 1000, ctx, ...(prompter ? { prompter } : {}) });
}
