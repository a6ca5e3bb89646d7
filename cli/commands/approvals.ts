/** `harness approve` / `harness deny`: decide pending tool calls from any process. */
import { InvalidArgumentError, type Command } from 'commander';
import { UsageError } from '../../machine/errors';
import type { CliContext } from '../context';
import type { DecideFlags } from '../actions/approvals';
import { waitTimeoutOption } from '../wait-options';
import { parseSessionId } from '../args';
import { parseBudgetAmount } from '../../config/budget-amount';

/** `--budget +5000` / `--budget +$0.50`: a raise, as a usage error when it is not one. */
function parseRaise(value: string): { unit: 'tokens' | 'usd'; amount: number } {
  try {
    return parseBudgetAmount(value, { raise: true });
  } catch (err) {
    throw new InvalidArgumentError(`${(err as Error).message} (${(err as { hint?: string }).hint ?? 'e.g. +5000 or +$0.50'})`);
  }
}

// The actions load their implementation (cli/actions/approvals.ts, and the Temporal client) when they run.
export function registerApprovals(program: Command, ctx: CliContext): void {
  program
    .command('approve')
    .description(
      "Approve a session's pending tool calls, each exactly as shown (its digest binds tool and arguments); waits for the turn like `run`. " +
        'Without call ids it approves the one pending call only if you were shown it as it is now (by `status`, `show`, or the prompt or ' +
        'lines of `run`/`chat`); otherwise, or when several calls wait, it asks at a terminal and without one exits 2 naming them',
    )
    .argument('<session>', 'session id', parseSessionId)
    .argument('[calls...]', 'the calls to approve: call ids (see `harness status`) or their digests (see `harness show`)')
    .option(
      '--always [words]',
      'also allow it for the rest of this session: exactly this command (or host, or tool); with words, ' +
        'commands whose program and first arguments are those words (e.g. --always "git commit")',
    )
    .option('--budget <+amount>', 'the turn waits for its budget: raise it by tokens (+5000) or money (+$0.50), in the unit of the budget it reached', parseRaise)
    .option('--json', 'print the turn result as JSON')
    .option('--no-wait', 'return as soon as the decision is delivered')
    .addOption(waitTimeoutOption())
    .action(async (sessionId: string, calls: string[], o: DecideFlags) => {
      if (o.budget && (calls.length || o.always)) throw new UsageError('--budget raises a budget: it takes no call id and no --always', `harness approve ${sessionId} --budget +5000`);
      return (await import('../actions/approvals')).decide(ctx, sessionId, calls, true, o);
    });

  program
    .command('deny')
    .description(
      "Deny a session's pending tool calls; the model sees APPROVAL_DENIED with the reason. Without call ids, like `approve`: only the one " +
        'call you were shown as it is now, else it asks (or exits 2 naming them). A turn waiting for its budget stops (budget_exceeded, its work kept)',
    )
    .argument('<session>', 'session id', parseSessionId)
    .argument('[calls...]', 'the calls to deny: call ids (see `harness status`) or their digests (see `harness show`)')
    .requiredOption('--reason <text>', 'why; shown to the model and kept in history')
    .option('--json', 'print the turn result as JSON')
    .option('--no-wait', 'return as soon as the decision is delivered')
    .addOption(waitTimeoutOption())
    .action(async (sessionId: string, calls: string[], o: DecideFlags) => {
      if (!o.reason?.trim()) throw new UsageError('--reason must not be empty');
      return (await import('../actions/approvals')).decide(ctx, sessionId, calls, false, o);
    });
}
