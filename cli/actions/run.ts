/** What `harness run` does (cli/commands/run.ts defines the command and loads this when it runs). */
import { newSessionId } from '../../api/send-options';
import { requireWorker } from '../../client/require-worker';
import type { CliContext } from '../context';
import { configFor, configForNew } from '../session-flags';
import { driveTurn, noWorkerHint, commandTroubleWait, workerStarting } from '../wait';
import { terminalPrompter } from '../prompter';
import { WaitNotes } from '../wait-notes';
import { readTask } from '../task-input';
import { say } from '../output';
import { checkWorkerModelKey } from '../model-key-check';
import { followBackground } from '../background-follow';

export interface RunFlags {
  session?: string;
  model?: string;
  maxSteps?: number;
  config?: string;
  policy?: string;
  agent?: string;
  json?: boolean;
  file?: string;
  waitTimeout: number;
}

export async function run(ctx: CliContext, taskArg: string | undefined, o: RunFlags): Promise<void> {
  // Everything that can be checked without a server is, so a mistake starts nothing.
  const task = await readTask(taskArg, o.file);
  const early = configForNew(ctx, o);
  const harness = await ctx.harness({ autostart: true });
  const client = harness.temporal;
  const sessionId = o.session ?? newSessionId();
  // Before the worker check: a mistyped --session is the mistake to name, whatever else is wrong.
  const config = await configFor(ctx, client, sessionId, o, early);
  // Fail rather than wait when no worker polls: the usual causes (a wrong TEMPORAL_ADDRESS
  // or HARNESS_TASK_QUEUE, no worker deployed) are not cured by waiting, and checking
  // before sending leaves no session behind that nobody would run.
  await requireWorker(client, ctx.settings.taskQueue, { hint: noWorkerHint(ctx), starting: () => workerStarting(ctx) });
  if (config) checkWorkerModelKey(config.model, { embedded: ctx.settings.embedded, home: ctx.home, env: ctx.env });
  // Sending rides out trouble like the wait, each bounded by --wait-timeout: a worker that
  // stopped after the check above holds the message up, and the wait says so instead of hanging.
  const notes = new WaitNotes();
  const troubleWait = commandTroubleWait(ctx, notes, o.waitTimeout * 1000, `for session ${sessionId}`, '', `see whether it arrived with \`harness status ${sessionId}\``);
  const { turnId } = await harness.send(task, { sessionId, config: config ?? null, ...(o.maxSteps ? { maxSteps: o.maxSteps } : {}), troubleWait });
  if (!o.json) say(`session ${sessionId} · ${turnId}`);
  const json = Boolean(o.json);
  const prompter = terminalPrompter(json);
  const drive = { json, waitTimeoutMs: o.waitTimeout * 1000, notes, ctx, ...(prompter ? { prompter } : {}) };
  const code = await driveTurn(harness, sessionId, turnId, drive);
  // Background sub-agents the turn left running: the turns their answers start are followed too.
  process.exitCode = await followBackground(harness, sessionId, turnId, drive, code);
}
