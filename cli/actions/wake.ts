/** What `harness wake` does (cli/commands/wake.ts defines it and loads this when it runs). */
import type { CliContext } from '../context';
import { followTurn, commandTroubleWait } from '../wait';
import { WaitNotes } from '../wait-notes';
import { say } from '../output';
import { UsageError } from '../../machine/errors';
import { escapeForTerminal } from '../../machine/terminal/escape';

export interface WakeFlags {
  reason?: string;
  json?: boolean;
  wait: boolean;
  waitTimeout: number;
}

/** Wakes the session's sleeping turn, says which wait it ended, then follows the turn like `run`. */
export async function wake(ctx: CliContext, sessionId: string, o: WakeFlags): Promise<void> {
  if (o.reason !== undefined && !o.reason.trim()) throw new UsageError('--reason must not be empty', `harness wake ${sessionId} --reason "the build finished"`);
  const timeoutMs = o.waitTimeout * 1000;
  const harness = await ctx.harness({ waits: true });
  const notes = new WaitNotes();
  const troubleWait = commandTroubleWait(ctx, notes, timeoutMs, `for session ${sessionId}`, '', `see whether it arrived with \`harness status ${sessionId}\``);
  const { turnId, sleeping } = await harness.wake(sessionId, o.reason, { troubleWait });
  // The reason is the model's text: it stays on its line.
  if (!o.json) say(`woke ${turnId}: its wait ${sleeping.callId} would have slept until ${sleeping.until} (${escapeForTerminal(sleeping.reason)})`);
  process.exitCode = await followTurn(harness, sessionId, turnId, o, 'woken', { notes, ctx });
}
