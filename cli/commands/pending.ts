/** `harness pending`: every approval, question and budget decision waiting on a person, across sessions and task queues. */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import { waitTimeoutOption } from '../wait-options';

// The action loads its implementation (cli/actions/pending.ts, and the Temporal client) when it runs.
export function registerPending(program: Command, ctx: CliContext): void {
  program
    .command('pending')
    .description(
      'List every tool call waiting for approval, every question waiting for an answer and every turn waiting for a budget decision, ' +
        'in all running sessions on any task queue (oldest first), each with its session, turn, id, tool and arguments (or the budget reached), ' +
        'task queue and how long it has waited; read from history, so no worker needs to run. Decide each with ' +
        '`harness approve|deny <session> <call id>`, `harness answer <session> <text>` or `harness approve <session> --budget +N` / `harness deny <session>`',
    )
    .option('--task-queue <name>', 'only sessions on this task queue')
    .option(
      '--json',
      'print as JSON: a list of {kind, session_id, turn_id, task_queue, since, call_id, tool, args, digest, risk, reason}, {kind, …, question_id, question} ' +
        'or {kind: "budget", …, scope, unit, limit, spent, estimate, step, summary, decide}',
    )
    .addOption(waitTimeoutOption('while Temporal does not answer, stop waiting after this long'))
    .action(async (o: { taskQueue?: string; json?: boolean; waitTimeout: number }) => (await import('../actions/pending')).pending(ctx, o));
}
