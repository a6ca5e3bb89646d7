/** What `harness rerun` does (cli/commands/rerun.ts defines the command and loads this when it runs). */
import { newSessionId } from '../../api/send-options';
import { planFork } from '../../history/fork';
import { effectsWords, planRerun, recordedCallIndex, rerunLines, seedWords } from '../../history/rerun';
import { modelSpec } from '../../config/resolve';
import { UsageError } from '../../machine/errors';
import { requireWorker } from '../../client/require-worker';
import type { CliContext } from '../context';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { EXIT, print, printJson, say } from '../output';
import { driveTurn, noWorkerHint, workerStarting } from '../wait';
import { terminalPrompter } from '../prompter';
import { startForked, waitForState } from '../../client/fork-start';
import { formatTurnId } from '../../deterministic/turn-id';

export interface RerunFlags {
  workspace?: string;
  liveAfter?: boolean;
  liveEffects?: boolean;
  model?: string;
  session?: string;
  json?: boolean;
  waitTimeout: number;
}

/** How long the comparison may take once the rerun's turn is done. */
const COMPARE_WAIT_MS = 60_000;

export async function rerun(ctx: CliContext, turnId: string, o: RerunFlags): Promise<void> {
  if (o.model && !o.liveAfter) throw new UsageError('--model goes with --live-after', 'the rerun itself answers with the recorded replies; --live-after --model M goes on live with M after a divergence');
  const liveModel = o.model ? modelSpec(o.model, process.cwd(), ctx.env.OPENAI_BASE_URL) : undefined;
  const client = await ctx.client();
  await requireWorker(client, ctx.settings.taskQueue, { hint: noWorkerHint(ctx), starting: () => workerStarting(ctx) });
  const plan = await planRerun(client, turnId, { ...(o.workspace ? { workspace: o.workspace } : {}), ...(o.liveEffects ? { liveEffects: true } : {}) });
  const sessionId = o.session ?? newSessionId();
  const state = await startForked(client, ctx.settings.taskQueue, plan, sessionId);
  const files = state?.fork?.seeded !== undefined ? ` (${state.fork.seeded} file${state.fork.seeded === 1 ? '' : 's'})` : '';
  say(escapeForTerminal(`rerunning ${turnId} in session ${sessionId} with its recorded replies; tools run again in a workspace seeded from ${seedWords(plan)}${files}`));
  say(escapeForTerminal(effectsWords(plan)));
  for (const p of state?.fork?.problems ?? []) say(escapeForTerminal(`not restored: ${p}`));
  const turn = formatTurnId(sessionId, 1);
  const waitTimeoutMs = o.waitTimeout * 1000;
  const harness = await ctx.harness();
  const out = await harness.wait(turn, { timeoutMs: waitTimeoutMs });
  if (out.kind === 'waiting') {
    // A call the record did not decide (the policy changed since), or, with --live-effects, a call
    // that leaves the sandbox: a human decides it now.
    say(o.liveEffects ? 'the rerun asks about a call: one that leaves the sandbox (--live-effects asks again), or one the record did not decide' : 'the rerun asks about a call the record did not decide');
    const prompter = terminalPrompter(Boolean(o.json));
    const code = await driveTurn(harness, sessionId, turn, { json: Boolean(o.json), waitTimeoutMs, ctx, ...(prompter ? { prompter } : {}) });
    if (code === EXIT.waiting) {
      say(`once it is decided and the turn is done, \`harness status ${sessionId} --json\` holds the comparison (rerun)`);
      return void (process.exitCode = code);
    }
  }
  const compared = await waitForState(client, sessionId, (s) => s.rerun !== undefined, COMPARE_WAIT_MS);
  const report = compared?.rerun;
  const result = out.kind === 'done' ? out.result : undefined;
  const effects = o.liveEffects ? 'live' : 'record';
  if (o.json) printJson({ session_id: sessionId, turn_id: turn, ...(result ? { terminated_by: result.terminated_by, steps: result.steps } : {}), effects, rerun: report ?? null });
  else if (report) print(rerunLines(turnId, report).map((l) => escapeForTerminal(l)).join('\n'));
  else say(`the comparison did not arrive within ${COMPARE_WAIT_MS / 1000} s; see it later with \`harness status ${sessionId} --json\``);
  process.exitCode = report && !report.diverged ? EXIT.ok : EXIT.error;
  if (!o.liveAfter || !report?.diverged) return;

  // Live from the step after the divergence: the rerun's results so far, then the recorded model.
  // The recorded model answers from where the record was at that step; another from its start.
  const step = report.first!.step + 1;
  const model = liveModel ?? plan.config.model;
  const base = liveModel ? 0 : recordedCallIndex(plan, step);
  const live = await planFork(client, turn, step, { model, ...(base !== undefined ? { modelCallBase: base } : {}) });
  const liveId = newSessionId();
  await startForked(client, ctx.settings.taskQueue, live, liveId);
  say(escapeForTerminal(`going on live from step ${step} in session ${liveId} with ${model.provider}:${model.model}`));
  const prompter = terminalPrompter(Boolean(o.json));
  process.exitCode = await driveTurn(harness, liveId, formatTurnId(liveId, 1), { json: Boolean(o.json), waitTimeoutMs, ctx, ...(prompter ? { prompter } : {}) });
}
