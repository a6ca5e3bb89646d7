/** `harness fork <turn-id> --at-step N`: a new session that goes on with a recorded turn from step N. */
import { InvalidArgumentError, type Command } from 'commander';
import { modelSpec } from '../../lib/config';
import { UsageError } from '../../lib/errors';
import { planFork, type ForkEdits } from '../../lib/fork';
import type { Client } from '@temporalio/client';
import { checkMessage, requireWorker, sessionState } from '../../lib/session-client';
import { startForked } from '../../lib/fork-start';
import { readBoundedText } from '../task-input';
import type { CliContext } from '../context';
import { escapeForTerminal } from '../../lib/terminal/escape';
import { say } from '../output';
import { driveTurn, noWorkerHint, terminalPrompter, waitTimeoutOption, workerStarting } from '../wait';
import { newSessionId, parseMaxSteps, parseSessionId, parseTurnId } from '../args';

interface ForkFlags {
  atStep: number;
  editSystem?: string;
  editMessage?: string;
  model?: string;
  maxSteps?: number;
  session?: string;
  json?: boolean;
  waitTimeout: number;
}

export function registerFork(program: Command, ctx: CliContext): void {
  program
    .command('fork')
    .description(
      'Start a new session from a recorded turn: its conversation up to step N is taken from the record (no model calls for those steps), ' +
        'optionally with the system prompt, the last user message or the model changed, then it goes on from step N',
    )
    .argument('<turn-id>', 'the recorded turn: <session>/turn-N', parseTurnId)
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
        'the step; what the record cannot restore (run_shell effects before the step) is said. Steps are numbered on from the\n' +
        'record, and so is the limit. Exit codes as for `harness run`.\n' +
        'Example: harness fork my-session/turn-2 --at-step 4 --edit-message "use the staging database instead"',
    )
    .action(async (turnId: string, o: ForkFlags) => {
      const edits: ForkEdits = {
        ...(o.editSystem !== undefined ? { system: readSystem(o.editSystem) } : {}),
        ...(o.editMessage !== undefined ? { message: checked(o.editMessage) } : {}),
        ...(o.model ? { model: modelSpec(o.model, process.cwd(), ctx.env.OPENAI_BASE_URL) } : {}),
        ...(o.maxSteps ? { maxSteps: o.maxSteps } : {}),
      };
      const client = await ctx.client();
      await requireWorker(client, ctx.settings.taskQueue, { hint: noWorkerHint(ctx), starting: () => workerStarting(ctx) });
      const plan = await planFork(client, turnId, o.atStep, edits);
      const sessionId = o.session ?? newSessionId();
      const state = await startForked(client, ctx.settings.taskQueue, plan, sessionId);
      const k = plan.kept;
      say(
        escapeForTerminal(
          `forked ${turnId} at step ${o.atStep} into session ${sessionId}` +
            (k.steps ? `: steps 1–${k.steps} taken from the record (${k.modelCalls} model call${k.modelCalls === 1 ? '' : 's'} not made)` : ''),
        ),
      );
      if (state?.fork?.seeded) say(`seeded with ${state.fork.seeded} file${state.fork.seeded === 1 ? '' : 's'} of the workspace as the turn began`);
      if (state?.fork?.restored.length) say(escapeForTerminal(`restored: ${state.fork.restored.join(', ')}`));
      for (const p of [...(state?.fork?.problems ?? []), ...plan.notRestored]) say(escapeForTerminal(`not restored: ${p}`));
      const turn = `${sessionId}/turn-1`;
      const json = Boolean(o.json);
      const prompter = terminalPrompter(json);
      process.exitCode = await driveTurn(await ctx.harness(), sessionId, turn, { json, waitTimeoutMs: o.waitTimeout * 1000, ctx, ...(prompter ? { prompter } : {}) });
      await noteStepLimit(client, sessionId, o.atStep, plan.spec.maxSteps ?? plan.config.limits.maxSteps);
    });
}

/**
 * A fork that ends on max_steps has used the limit counted from the recorded turn's step 1, not
 * from the fork step: say so and how to go further, rather than leave a bare `max_steps`.
 */
async function noteStepLimit(client: Client, sessionId: string, atStep: number, limit: number): Promise<void> {
  const state = await sessionState(client, sessionId).catch(() => undefined);
  if (state?.lastTurn?.terminated_by !== 'max_steps') return;
  const ran = atStep === limit ? `step ${limit} only` : `steps ${atStep}–${limit}`;
  say(`note: the fork stopped at its step limit of ${limit}, counted from the recorded turn's step 1 (it ran ${ran}); fork again with a higher --max-steps to go further`);
}

function parseStep(value: string): number {
  try {
    return parseMaxSteps(value);
  } catch {
    throw new InvalidArgumentError('expected a step number (1 or more)');
  }
}

function readSystem(file: string): string {
  let text: string;
  try {
    text = readBoundedText(file, `the system prompt in ${file}`);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read ${file}`, '--edit-system takes a file holding the new system prompt');
  }
  checkMessage(text, `the system prompt in ${file}`, 'write the new system prompt in it');
  return text;
}

function checked(text: string): string {
  checkMessage(text, '--edit-message', 'give the new text of the last user message');
  return text;
}
