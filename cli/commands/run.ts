/** `harness run "<task>"`: one turn, starting the session (and the embedded server) as needed. */
import type { Command } from 'commander';
import { sendMessage } from '../../lib/session-client';
import type { CliContext } from '../context';
import { configFor, configForNew } from '../session-config';
import { driveTurn, terminalPrompter } from '../wait';
import { parseMaxSteps, parseSessionId, newSessionId } from '../args';
import { say } from '../output';

export function registerRun(program: Command, ctx: CliContext): void {
  program
    .command('run')
    .description('Run one turn of a session and print its answer (starts the embedded server and a worker if none is running)')
    .argument('<task>', 'what the agent should do')
    .option('--session <id>', 'continue this session (default: a new one)', parseSessionId)
    .option('--model <model>', 'model name for the OpenAI-compatible endpoint, or scripted:<file>')
    .option('--max-steps <n>', 'step limit for this turn', parseMaxSteps)
    .option('--config <file>', 'config file (default ./harness.config.json)')
    .option('--policy <mode>', 'permission policy mode for a new session: strict, ask (default) or auto')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 done, 1 error or failed turn, 2 usage, 3 waiting for a human\n' +
        '(answer with `harness answer`, decide approvals with `harness approve` / `harness deny`).\n' +
        'Example: harness run --model scripted:examples/demo.json "Summarize README.md" --json',
    )
    .action(async (task: string, o: { session?: string; model?: string; maxSteps?: number; config?: string; policy?: string; json?: boolean }) => {
      const early = configForNew(ctx, o);
      const client = await ctx.client({ autostart: true });
      const sessionId = o.session ?? newSessionId();
      const config = await configFor(ctx, client, sessionId, o, early);
      const { turnId } = await sendMessage(client, {
        taskQueue: ctx.settings.taskQueue,
        sessionId,
        ...(config ? { config } : {}),
        text: task,
        ...(o.maxSteps ? { maxSteps: o.maxSteps } : {}),
      });
      if (!o.json) say(`session ${sessionId} · ${turnId}`);
      const json = Boolean(o.json);
      const prompter = terminalPrompter(json);
      process.exitCode = await driveTurn(client, sessionId, turnId, { json, ...(prompter ? { prompter } : {}) });
    });
}
