/** `harness run "<task>"`: one turn, starting the session (and the embedded server) as needed. */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import type { RunFlags } from '../actions/run';
import { waitTimeoutOption } from '../wait-options';
import { parseMaxSteps, parseSessionId } from '../args';

export function registerRun(program: Command, ctx: CliContext): void {
  program
    .command('run')
    .description('Run one turn of a session and print its answer (starts the embedded server and a worker if none is running)')
    .argument('[task]', 'what the agent should do; `-` reads it from standard input')
    .option('--file <path>', 'read the task from a file (for tasks too long for a command line)')
    .option('--session <id>', 'continue this session (default: a new one)', parseSessionId)
    .option('--model <model>', 'model name for the OpenAI-compatible endpoint, or scripted:<file>')
    .option('--max-steps <n>', 'step limit for this turn', parseMaxSteps)
    .option('--config <file>', 'config file (default ./harness.config.json)')
    .option('--policy <mode>', 'permission policy mode for a new session: strict, ask (default) or auto')
    .option('--agent <name>', "run a new session as this agent of the worker (its config's `agents`, or createHarnessWorker's): the agent's model, instructions, policy, tools, MCP servers and skills; --model and --policy may only narrow them")
    .option('--json', 'print the result as JSON')
    .addOption(waitTimeoutOption())
    .addHelpText(
      'after',
      '\nExit codes: 0 done, 1 error or failed turn, 2 usage, 3 waiting for a human\n' +
        '(answer with `harness answer`, decide approvals with `harness approve` / `harness deny`).\n' +
        'A task is at most 256 KiB of UTF-8 text; long ones go in a file (--file) or on standard input (-).\n' +
        'Example: harness run --model scripted:examples/demo.json "Summarize README.md" --json\n' +
        'With an agent the worker declares: harness run --agent support "Where is my order?"',
    )
    // The implementation (and the Temporal client under it) is loaded only when the command runs.
    .action(async (taskArg: string | undefined, o: RunFlags) => (await import('../actions/run')).run(ctx, taskArg, o));
}
