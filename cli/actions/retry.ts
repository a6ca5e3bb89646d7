/** What `harness retry` does (cli/commands/retry.ts defines the command and loads this when it runs). */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { UserError } from '../../machine/errors';
import { planRetry, resetTurn, retryWords } from '../../history/retry';
import { requireWorker } from '../../client/require-worker';
import { retryTurnUpdate } from '../../deterministic/messages';
import { isAgentTurnId } from '../../deterministic/turn-id';
import type { CliContext } from '../context';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { printJson, say } from '../output';
import { driveTurn, noWorkerHint, workerStarting } from '../wait';
import { terminalPrompter } from '../prompter';

export interface RetryFlags {
  json?: boolean;
  wait: boolean;
  waitTimeout: number;
}

export async function retry(ctx: CliContext, turnId: string, o: RetryFlags): Promise<void> {
  const client = await ctx.client();
  await requireWorker(client, ctx.settings.taskQueue, { hint: noWorkerHint(ctx), starting: () => workerStarting(ctx) });
  if (isAgentTurnId(turnId)) return (await import('./retry-sub-agent')).retrySubAgent(ctx, client, turnId, o);
  const plan = await planRetry(client, turnId);
  // The session takes the turn back first, so it hears everything the reset run reports.
  if (plan.parent) {
    try {
      await client.workflow.getHandle(plan.parent).executeUpdate(retryTurnUpdate, { args: [{ turn: plan.turn, runId: plan.runId }] });
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        throw new UserError(`session ${plan.parent} refuses the retry: ${err.cause?.message ?? err.message}`, `see it with \`harness status ${plan.parent}\``);
      }
      throw err;
    }
  }
  const runId = await resetTurn(client, plan);
  // Words on stderr; with --json, stdout holds one object: the plan (--no-wait) or the turn's result.
  say(escapeForTerminal(retryWords(plan)));
  if (!o.wait) {
    if (o.json) printJson({ turn_id: plan.turnId, run_id: runId, reset_from_run: plan.runId, step: plan.step, why: plan.why, kept: plan.kept });
    return;
  }
  const json = Boolean(o.json);
  const prompter = terminalPrompter(json);
  process.exitCode = await driveTurn(await ctx.harness(), plan.sessionId, plan.turnId, { json, waitTimeoutMs: o.waitTimeout * 1000, ctx, ...(prompter ? { prompter } : {}) });
}
