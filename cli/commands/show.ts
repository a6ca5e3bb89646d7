/** `harness show <session> <callId> [--json]`: every argument of one tool call, whole. */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import type { ShowFlags } from '../actions/show';
import { parseSessionId } from '../args';

// The action loads its implementation (the trace reader, the message store) when it runs.
export function registerShow(program: Command, ctx: CliContext): void {
  program
    .command('show')
    .description(
      'Print every argument of one tool call of a session, whole (a long command, a file\'s content, a request body), with its tool, ' +
        'digest, risk, the rule that asked and where it stands (waiting for approval, approved or denied by whom, ran). Control, bidi ' +
        'and invisible characters are shown as escapes (\\e, \\u202e …). The approval views cut long values and name this command',
    )
    .argument('<session>', 'session id', parseSessionId)
    .argument('<callId>', 'the call (t<turn>-s<step>-c<n>, as `harness status` and `harness trace` show it)')
    .option('--json', 'print the call as JSON: {session_id, turn_id, call_id, tool, pending, state, digest, risk, rule, reason, args}, args whole')
    .addHelpText(
      'after',
      '\nA pending call shown here counts as shown to you: `harness approve <session>` without call ids then decides it\n' +
        '(when it is the only one pending and has not changed since). To decide it by what you read, name it:\n' +
        '`harness approve <session> <callId>` or its digest.',
    )
    .action(async (sessionId: string, callId: string, o: ShowFlags) => (await import('../actions/show')).show(ctx, sessionId, callId, o));
}
