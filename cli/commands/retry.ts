/** `harness retry <turn-id>`: a failed turn goes on from its last good step with the current code. */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import type { RetryFlags } from '../actions/retry';
import { waitTimeoutOption } from '../wait-options';
import { parseAnyTurnId } from '../args';

// The action loads its implementation (cli/actions/retry.ts, and the Temporal client) when it runs.
export function registerRetry(program: Command, ctx: CliContext): void {
  program
    .command('retry')
    .description(
      'Continue a turn that failed (its model endpoint was down past its retries, a bug since fixed) or was terminated, ' +
        'from its last good step with the current code: completed model calls and tool calls are kept from history, not repeated',
    )
    .argument('<turn-id>', 'the turn: <session>/turn-N (it must be the last turn of its session), or a sub-agent\'s (<session>/turn-N/agent-<call id>), which goes on in a new session of that sub-agent', parseAnyTurnId)
    .option('--json', "print the turn's result as JSON (with --no-wait: where the retry starts and what it keeps)")
    .option('--no-wait', 'start the retry and return')
    .addOption(waitTimeoutOption())
    .addHelpText('after', '\nExit codes: 0 done, 1 error or failed again, 2 usage, 3 waiting for a human.\nExample: harness retry my-session/turn-3')
    .action(async (turnId: string, o: RetryFlags) => (await import('../actions/retry')).retry(ctx, turnId, o));
}
