/** `harness wake`: end the wait of a session whose turn sleeps in a `wait` call. */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import type { WakeFlags } from '../actions/wake';
import { waitTimeoutOption } from '../wait-options';
import { parseSessionId } from '../args';

// The action loads its implementation (cli/actions/wake.ts, and the Temporal client) when it runs.
export function registerWake(program: Command, ctx: CliContext): void {
  program
    .command('wake')
    .description(
      'Wake a session whose turn sleeps in a `wait` call (`status` shows "sleeping until …"): the call ends now, the model reads that it ' +
        'was woken, by whom and why, and the turn goes on; waits for the turn like `run`. A session that is not sleeping is an error',
    )
    .argument('<session>', 'session id', parseSessionId)
    .option('--reason <text>', 'why it is woken; the model reads it')
    .option('--json', 'print the turn result as JSON')
    .option('--no-wait', 'return as soon as the wake is delivered')
    .addOption(waitTimeoutOption())
    .action(async (sessionId: string, o: WakeFlags) => (await import('../actions/wake')).wake(ctx, sessionId, o));
}
