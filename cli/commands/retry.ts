/** `harness retry <turn-id>`: a failed turn goes on from its last good step with the current code. */
import type { Command } from 'commander';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { UserError } from '../../lib/errors';
import { planRetry, resetTurn, retryWords } from '../../lib/retry';
import { requireWorker } from '../../lib/session-client';
import { retryTurnUpdate } from '../../workflows/definitions';
import type { CliContext } from '../context';
import { escapeForTerminal } from '../../lib/terminal/escape';
import { printJson, say } from '../output';
import { driveTurn, noWorkerHint, terminalPrompter, waitTimeoutOption, workerStarting } from '../wait';
import { parseTurnId } from '../args';

export function registerRetry(program: Command, ctx: CliContext): void {
  program
    .command('retry')
    .description(
      'Continue a turn that failed (its model endpoint was down past its retries, a bug since fixed) or was terminated, ' +
        'from its last good step with the current code: completed model calls and tool calls are kept from history, not repeated',
    )
    .argument('<turn-id>', 'the turn: <session>/turn-N (it must be the last turn of its session)', parseTurnId)
    .option('--json', "print the turn's result as JSON (with --no-wait: where the retry starts and what it keeps)")
    .option('--no-wait', 'start the retry and return')
    .addOption(waitTimeoutOption())
    .addHelpText('after', '\nExit codes: 0 done, 1 error or failed again, 2 usage, 3 waiting for a human.\nExample: harness retry my-session/turn-3')
    .action(async (turnId: string, o: { json?: boolean; wait: boolean; waitTimeout: number }) => {
      const client = await ctx.client();
      await requireWorker(client, ctx.settings.taskQueue, { hint: noWorkerHint(ctx), starting: () => workerStarting(ctx) });
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
    });
}
