/** What `harness fork` does (cli/commands/fork.ts defines the command and loads this when it runs). */
import type { Client } from '@temporalio/client';
import { newSessionId } from '../../api/send-options';
import { modelSpec } from '../../config/resolve';
import { UsageError } from '../../machine/errors';
import { planFork, type ForkEdits } from '../../history/fork';
import type { Rule } from '../../deterministic/policy/schema';
import { checkMessage, sessionState } from '../../client/session-client';
import { requireWorker } from '../../client/require-worker';
import { startForked } from '../../client/fork-start';
import { readBoundedText } from '../task-input';
import type { CliContext } from '../context';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { say } from '../output';
import { driveTurn, noWorkerHint, workerStarting } from '../wait';
import { terminalPrompter } from '../prompter';
import { formatTurnId } from '../../deterministic/turn-id';
import { agentPathLabel } from '../../deterministic/sub-agents';

export interface ForkFlags {
  atStep: number;
  editSystem?: string;
  editMessage?: string;
  model?: string;
  maxSteps?: number;
  session?: string;
  json?: boolean;
  waitTimeout: number;
}

export async function fork(ctx: CliContext, turnId: string, o: ForkFlags): Promise<void> {
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
      `forked ${turnId} at step ${o.atStep} into session ${sessionId}${asAgent(plan.agentPath)}` +
        (k.steps ? `: ${k.steps === 1 ? 'step 1' : `steps 1–${k.steps}`} taken from the record (${k.modelCalls} model call${k.modelCalls === 1 ? '' : 's'} not made)` : ''),
    ),
  );
  if (state?.fork?.seeded) say(`seeded with ${state.fork.seeded} file${state.fork.seeded === 1 ? '' : 's'} of the workspace as the turn began`);
  if (state?.fork?.restored.length) say(escapeForTerminal(`restored: ${state.fork.restored.join(', ')}`));
  for (const p of [...(state?.fork?.problems ?? []), ...plan.notRestored]) say(escapeForTerminal(`not restored: ${p}`));
  if (plan.grantsDropped.length) say(escapeForTerminal(grantsWords(plan.grantsDropped)));
  const turn = formatTurnId(sessionId, 1);
  const json = Boolean(o.json);
  const prompter = terminalPrompter(json);
  process.exitCode = await driveTurn(await ctx.harness(), sessionId, turn, { json, waitTimeoutMs: o.waitTimeout * 1000, ctx, ...(prompter ? { prompter } : {}) });
  await noteStepLimit(client, sessionId, o.atStep, plan.spec.maxSteps ?? plan.config.limits.maxSteps);
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

/** For a sub-agent's turn: the words saying the new session runs as that sub-agent (its instructions, tools, policy, model). */
export function asAgent(path: string[] | undefined): string {
  return path?.length ? `, running as sub-agent ${agentPathLabel(path)}` : '';
}

/** The source's grants the fork does not keep, in words: its calls of those tools are judged afresh. */
function grantsWords(rules: Rule[]): string {
  const what = rules.map((r) => (r.when?.host?.length ? `${r.tool} (${r.when.host.join(', ')})` : r.tool));
  return `not carried over: the source session's --always grant${rules.length === 1 ? '' : 's'} for ${[...new Set(what)].join(', ')}: calls that leave the sandbox are judged by the policy afresh`;
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
