/** What `harness send` does (cli/commands/send.ts defines it and loads this when it runs). */
import type { CliContext } from '../context';
import { followTurn, commandTroubleWait } from '../wait';
import { WaitNotes } from '../wait-notes';
import { print, printJson, say } from '../output';
import { readTask } from '../task-input';
import { UsageError } from '../../machine/errors';
import type { WhileRunning } from '../../deterministic/messages';

export interface SendFlags {
  interrupt?: boolean;
  reject?: boolean;
  wait?: boolean;
  json?: boolean;
  waitTimeout: number;
}

/** Sends the message (queued for a running turn unless --interrupt or --reject says otherwise) and says where it went. */
export async function send(ctx: CliContext, sessionId: string, textArg: string, o: SendFlags): Promise<void> {
  if (o.interrupt && o.reject) throw new UsageError('--interrupt and --reject cannot be combined', `harness send ${sessionId} "…" --interrupt (or --reject, or neither to queue)`);
  const text = await readTask(textArg, undefined);
  const whileRunning: WhileRunning = o.interrupt ? 'interrupt' : o.reject ? 'reject' : 'queue';
  const timeoutMs = o.waitTimeout * 1000;
  const harness = await ctx.harness({ waits: true });
  const notes = new WaitNotes();
  const troubleWait = commandTroubleWait(ctx, notes, timeoutMs, `for session ${sessionId}`, '', `see whether it arrived with \`harness status ${sessionId}\``);
  const sent = await harness.send(text, { sessionId, config: null, whileRunning, troubleWait });
  const { turnId, turn, steered } = sent;
  if (!o.wait) {
    if (o.json) printJson({ session_id: sessionId, workflow_id: turnId, turn, status: steered === 'interrupt' ? 'interrupting' : steered ? 'queued' : 'started' });
    else if (steered === 'interrupt') print(`interrupted ${turnId}: its current step's calls are cancelled and it goes on with the message`);
    else if (steered) print(`queued for ${turnId}: the model reads it at its next step`);
    else print(`session ${sessionId} · ${turnId}: a turn started with the message`);
    return;
  }
  if (!o.json) say(steered ? `sent to the running ${turnId} (${steered})` : `session ${sessionId} · ${turnId}`);
  process.exitCode = await followTurn(harness, sessionId, turnId, { json: Boolean(o.json), wait: true, waitTimeout: o.waitTimeout }, steered ? 'steered' : 'started', { notes, ctx });
}
