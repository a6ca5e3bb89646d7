/** `harness status`, `harness sessions [prune]`, `harness answer`, `harness end [--purge]`: talk to existing sessions. */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import type { AnswerFlags, EndFlags, PruneFlags, SessionsFlags, StatusFlags } from '../actions/inspect';
import { waitTimeoutOption } from '../wait-options';
import { parseLimit, parseSessionId } from '../args';
import { InvalidArgumentError } from 'commander';

// The states `sessions --state` takes (cli/actions/watch.ts reads them; kept here so --help loads nothing).
const STATES = ['idle', 'running', 'waiting', 'waiting_for_approval', 'waiting_for_user', 'waiting_for_budget', 'closed', 'ended', 'failed', 'terminated'];

function parseState(value: string): string {
  if (!STATES.includes(value)) throw new InvalidArgumentError(`one of ${STATES.join(', ')}`);
  return value;
}

// Each action loads its implementation (cli/actions/inspect.ts, and the Temporal client) when it runs.
export function registerInspect(program: Command, ctx: CliContext): void {
  program
    .command('status')
    .description("Show a session's state: status (failed and ended sessions say why), pending question, turns, token usage")
    .argument('<session>', 'session id', parseSessionId)
    .option('--json', 'print the state as JSON (with --follow, then one JSON line per event: {change, span})')
    .option('--follow', 'then print each step event as it happens (model calls, tool calls, waits, decisions) until the session ends or Ctrl-C')
    .addOption(waitTimeoutOption('while Temporal or a worker does not answer, stop waiting after this long'))
    .action(async (sessionId: string, o: StatusFlags) => (await import('../actions/inspect')).status(ctx, sessionId, o));

  // `sessions prune --json`: without positional options the parent `sessions` would take the
  // subcommand's --json as its own (the program itself has no options this could change).
  program.enablePositionalOptions();
  const sessions = program
    .command('sessions')
    .enablePositionalOptions()
    .description('List sessions, newest first, each with its own state (idle, running step N, waiting for approval or an answer, ended, failed …), turns, tokens, age and last task; `sessions prune` deletes what old ended sessions stored')
    .option('--limit <n>', 'at most this many (1 to 1000)', parseLimit, 20)
    .option('--state <state>', `only sessions in this state: ${STATES.join(', ')} (waiting: any wait for a person; closed: any end)`, parseState)
    .option('--json', 'print as JSON')
    .addOption(waitTimeoutOption('while Temporal does not answer, stop waiting after this long'))
    .action(async (o: SessionsFlags) => (await import('../actions/inspect')).sessions(ctx, o));

  sessions
    .command('prune')
    .description(
      'Delete what sessions that ended longer ago than --older-than stored on the worker (messages, workspace, records, sandbox; ' +
        'never long-term memory); running sessions are never pruned',
    )
    .requiredOption('--older-than <age>', 'how long ago a session must have ended: e.g. 30d, 12h, 90m')
    .option('--dry-run', 'list the sessions that would be purged, deleting nothing')
    .option('--json', 'print as JSON')
    .action(async (o: PruneFlags) => (await import('../actions/inspect')).prune(ctx, o));

  program
    .command('answer')
    .description("Answer a session's pending ask_user question (from any process); waits for the turn like `run`")
    .argument('<session>', 'session id', parseSessionId)
    .argument('<text>', 'the answer')
    .option('--json', 'print the turn result as JSON')
    .option('--no-wait', 'return as soon as the answer is delivered')
    .addOption(waitTimeoutOption())
    .action(async (sessionId: string, text: string, o: AnswerFlags) => (await import('../actions/inspect')).answer(ctx, sessionId, text, o));

  program
    .command('end')
    .description('End a session once its current turn is done; with --purge, then delete what it stored')
    .argument('<session>', 'session id', parseSessionId)
    .option('--purge', "then delete the session's messages, workspace, exec and write records and sandbox on the worker (not long-term memory)")
    .action(async (sessionId: string, o: EndFlags) => (await import('../actions/inspect')).end(ctx, sessionId, o));
}
