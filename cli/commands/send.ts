/** `harness send`: a message for an existing session, also while its turn runs (steering). */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import type { SendFlags } from '../actions/send';
import { waitTimeoutOption } from '../wait-options';
import { parseSessionId } from '../args';

// The action loads its implementation (cli/actions/send.ts, and the Temporal client) when it runs.
export function registerSend(program: Command, ctx: CliContext): void {
  program
    .command('send')
    .description(
      'Send a message to a session. While its turn runs the message is queued for that turn: the model reads it at its next step ' +
        '(the turn does not end before it has); an idle session starts a turn with it',
    )
    .argument('<session>', 'session id', parseSessionId)
    .argument('<text>', 'the message; `-` reads it from standard input')
    .option('--interrupt', "while a turn runs: cancel its current step's tool calls (they get the cancelled result) and go on with the message")
    .option('--reject', 'while a turn runs: refuse the message (as messages to a busy session were refused before)')
    .option('--wait', 'wait for the turn that takes the message, like `run`')
    .option('--json', 'print what was sent (or, with --wait, the turn result) as JSON')
    .addOption(waitTimeoutOption())
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  harness send s-1234 "also update the changelog"        # queued for the running turn\n' +
        '  harness send s-1234 "stop, use the staging DB" --interrupt\n' +
        '  harness send s-1234 "next task" --reject               # only if the session is idle',
    )
    .action(async (sessionId: string, text: string, o: SendFlags) => (await import('../actions/send')).send(ctx, sessionId, text, o));
}
