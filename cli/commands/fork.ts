/** `harness fork <turn-id> --at-step N`: a new session that goes on with a recorded turn from step N. */
import { InvalidArgumentError, type Command } from 'commander';
import type { CliContext } from '../context';
import type { ForkFlags } from '../actions/fork';
import { waitTimeoutOption } from '../wait-options';
import { parseAnyTurnId, parseMaxSteps, parseSessionId } from '../args';

// The action loads its implementation (cli/actions/fork.ts, and the Temporal client) when it runs.
export function registerFork(program: Command, ctx: CliContext): void {
  program
    .command('fork')
    .description(
      'Start a new session from a recorded turn: its conversation up to step N is taken from the record (no model calls for those steps), ' +
        'optionally with the system prompt, the last user message or the model changed, then it goes on from step N',
    )
    .argument('<turn-id>', 'the recorded turn: <session>/turn-N, or a sub-agent\'s (<session>/turn-N/agent-<call id>), which the new session runs as that sub-agent', parseAnyTurnId)
    .requiredOption('--at-step <n>', 'the step to go on from: the model is asked again from this step (1 = the whole turn again)', parseStep)
    .option('--edit-system <file>', 'use the system prompt in this file')
    .option('--edit-message <text>', 'replace the last user message before the step with this text')
    .option('--model <model>', 'go on with this model (a name for the OpenAI-compatible endpoint, or scripted:<file>, which starts at its first step)')
    .option('--max-steps <n>', 'the step limit, counted from the recorded turn\'s step 1 (default: the recorded turn\'s limit)', parseMaxSteps)
    .option('--session <id>', 'the new session\'s id (default: a new one)', parseSessionId)
    .option('--json', 'print the result as JSON')
    .addOption(waitTimeoutOption())
    .addHelpText(
      'after',
      '\nThe new session\'s workspace is the recorded turn\'s as it began, plus the files the turn wrote with write_file before\n' +
        'the step; what the record cannot restore (run_shell effects before the step) is said. No tool call of the steps\n' +
        'before runs again. Calls from the step are judged like any new call: the source session\'s --always grants are kept\n' +
        'only for tools whose effects stay in the sandbox (not for http_request, MCP or custom tools, remember_longterm).\n' +
        'Steps are numbered on from the record, and so is the limit. Exit codes as for `harness run`.\n' +
        'Example: harness fork my-session/turn-2 --at-step 4 --edit-message "use the staging database instead"',
    )
    .action(async (turnId: string, o: ForkFlags) => (await import('../actions/fork')).fork(ctx, turnId, o));
}

function parseStep(value: string): number {
  try {
    return parseMaxSteps(value);
  } catch {
    throw new InvalidArgumentError('expected a step number (1 or more)');
  }
}
