/** `harness cancel <turn|session>`: stop a running turn (its session goes on) or a whole session. */
import { Option, type Command } from 'commander';
import type { CliContext } from '../context';
import type { CancelFlags } from '../actions/cancel';
import { parseSessionOrAnyTurnId } from '../args';
import { parseWaitTimeout } from '../wait-options';

// The action loads its implementation (cli/actions/cancel.ts, and the Temporal client) when it runs.
export function registerCancel(program: Command, ctx: CliContext): void {
  program
    .command('cancel')
    .description(
      'Cancel a running turn: it stops within seconds (a run_shell command is killed in the sandbox, an http_request ' +
        'aborted, a wait on a person ended) and ends `cancelled`, keeping the work it did; the session takes the next message. ' +
        'Given a sub-agent\'s turn: it stops the same way and its parent turn goes on, that call failed. ' +
        'Given a session: end it, cancelling its current turn, and remove its sandbox',
    )
    .argument('<turn|session>', "a turn (<session>/turn-N, or a sub-agent's <session>/turn-N/agent-<call id>) or a session id", parseSessionOrAnyTurnId)
    .option('--json', 'print what was cancelled as JSON')
    .option('--no-wait', 'ask for the cancellation and return without waiting for it to take effect')
    .addOption(new Option('--wait-timeout <seconds>', 'stop waiting after this long (the cancellation stays asked for)').argParser(parseWaitTimeout).default(120))
    .addHelpText(
      'after',
      '\nA turn that has already finished cannot be cancelled (see it with `harness trace <turn>`); to stop a session\n' +
        'after its current turn instead, use `harness end`.\n' +
        'Exit codes: 0 cancelled (or it finished first: the output says how it ended), 1 error, 2 usage.\n' +
        'Examples: harness cancel my-session/turn-3\n          harness cancel my-session/turn-3/agent-t3-s1-c0\n          harness cancel my-session',
    )
    .action(async (id: string, o: CancelFlags) => (await import('../actions/cancel')).cancel(ctx, id, o));
}
