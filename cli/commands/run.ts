/** `harness run "<task>"`: one turn, starting the session (and the embedded server) as needed. */
import type { Command } from 'commander';
import { requireWorker } from '../../lib/session-client';
import type { CliContext } from '../context';
import { configFor, configForNew } from '../session-config';
import { driveTurn, noWorkerHint, terminalPrompter, waitRide, waitTimeoutOption, workerStarting } from '../wait';
import { WaitNotes } from '../wait-notes';
import { readTask } from '../task-input';
import { parseMaxSteps, parseSessionId, newSessionId } from '../args';
import { say } from '../output';

interface RunFlags {
  session?: string;
  model?: string;
  maxSteps?: number;
  config?: string;
  policy?: string;
  json?: boolean;
  file?: string;
  waitTimeout: number;
}

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
    .option('--json', 'print the result as JSON')
    .addOption(waitTimeoutOption())
    .addHelpText(
      'after',
      '\nExit codes: 0 done, 1 error or failed turn, 2 usage, 3 waiting for a human\n' +
        '(answer with `harness answer`, decide approvals with `harness approve` / `harness deny`).\n' +
        'A task is at most 256 KiB of UTF-8 text; long ones go in a file (--file) or on standard input (-).\n' +
        'Example: harness run --model scripted:examples/demo.json "Summarize README.md" --json',
    )
    .action(async (taskArg: string | undefined, o: RunFlags) => {
      // Everything that can be checked without a server is, so a mistake starts nothing.
      const task = await readTask(taskArg, o.file);
      const early = configForNew(ctx, o);
      const harness = await ctx.harness({ autostart: true });
      const client = harness.temporal;
      // Fail rather than wait when no worker polls: the usual causes (a wrong TEMPORAL_ADDRESS
      // or HARNESS_TASK_QUEUE, no worker deployed) are not cured by waiting, and checking
      // before sending leaves no session behind that nobody would run.
      await requireWorker(client, ctx.settings.taskQueue, { hint: noWorkerHint(ctx), starting: () => workerStarting(ctx) });
      const sessionId = o.session ?? newSessionId();
      const config = await configFor(ctx, client, sessionId, o, early);
      // Sending rides out trouble like the wait, each bounded by --wait-timeout: a worker that
      // stopped after the check above holds the message up, and the wait says so instead of hanging.
      const notes = new WaitNotes();
      const ride = waitRide(ctx, notes, o.waitTimeout * 1000, `for session ${sessionId}`, '', `see whether it arrived with \`harness status ${sessionId}\``);
      const { turnId } = await harness.send(task, { sessionId, config: config ?? null, ...(o.maxSteps ? { maxSteps: o.maxSteps } : {}), ride });
      if (!o.json) say(`session ${sessionId} · ${turnId}`);
      const json = Boolean(o.json);
      const prompter = terminalPrompter(json);
      process.exitCode = await driveTurn(harness, sessionId, turnId, {
        json,
        waitTimeoutMs: o.waitTimeout * 1000,
        notes,
        ctx,
        ...(prompter ? { prompter } : {}),
      });
    });
}
