/** What `harness chat` does (cli/commands/chat.ts defines the command and loads this when it runs). */
import { createInterface } from 'node:readline/promises';
import { newSessionId } from '../../api/send-options';
import { checkMessage } from '../../client/session-client';
import { requireWorker } from '../../client/require-worker';
import { UserError } from '../../machine/errors';
import type { CliContext } from '../context';
import { configFor, configForNew } from '../session-flags';
import { driveTurn, noWorkerHint, commandTroubleWait, workerStarting } from '../wait';
import { linePrompter } from '../prompter';
import { DEFAULT_WAIT_TIMEOUT_SEC } from '../wait-options';
import { WaitNotes } from '../wait-notes';
import { prompt, say } from '../output';
import { ChatLines } from '../chat-lines';
import type { HarnessClient } from '../../api/client';
import { lineOrBackgroundTurn, turnNumber } from '../background-follow';

export interface ChatFlags {
  session?: string;
  model?: string;
  config?: string;
  policy?: string;
  agent?: string;
}

export async function chat(ctx: CliContext, o: ChatFlags): Promise<void> {
  const early = configForNew(ctx, o);
  const harness = await ctx.harness({ autostart: true });
  const client = harness.temporal;
  // As in `run`: without a worker nothing would answer, so say so before the first line.
  await requireWorker(client, ctx.settings.taskQueue, { hint: noWorkerHint(ctx), starting: () => workerStarting(ctx) });
  const sessionId = o.session ?? newSessionId();
  let config = await configFor(ctx, client, sessionId, o, early);
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: Boolean(process.stdin.isTTY) });
  const lines = new ChatLines(rl);
  const next = async (text: string, signal?: AbortSignal): Promise<string | undefined> => {
    if (process.stdin.isTTY) prompt(text);
    return untilAborted(lines.next(signal), signal);
  };
  // Input that ends at a question or approval leaves it pending (exit 3, see driveTurn).
  const prompter = linePrompter(next);
  const shown = config?.agent !== undefined ? ` (agent ${config.agent})` : config ? ` (model ${config.model.provider}:${config.model.model})` : ' (continued)';
  say(`session ${sessionId}${shown}; /exit to leave${process.stdin.isTTY ? '; type while a turn runs to steer it (/interrupt TEXT stops its step)' : ''}`);
  // The last turn followed: the turns its background sub-agents' answers start are followed too.
  let last: string | undefined;
  try {
    for (;;) {
      const got = await lineOrBackgroundTurn(harness, sessionId, turnNumber(last), (signal) => next('you> ', signal));
      if ('turnId' in got) {
        say(`session ${sessionId} · ${got.turnId} (a new turn while background sub-agents ran: one answered, or a message arrived)`);
        process.exitCode = await driveTurn(harness, sessionId, got.turnId, { json: false, prompter, ctx, waitTimeoutMs: DEFAULT_WAIT_TIMEOUT_SEC * 1000 });
        last = got.turnId;
        continue;
      }
      const line = got.line;
      if (line === undefined || line === '/exit' || line === '/quit') break;
      try {
        checkMessage(line);
      } catch (err) {
        // One line and the chat goes on: a bad line must not end the conversation.
        if (!(err instanceof UserError)) throw err;
        say(`error: ${err.message}; type a message, or /exit to leave`);
        continue;
      }
      const notes = new WaitNotes();
      const timeoutMs = DEFAULT_WAIT_TIMEOUT_SEC * 1000;
      const troubleWait = commandTroubleWait(ctx, notes, timeoutMs, `for session ${sessionId}`, '', `see whether it arrived with \`harness status ${sessionId}\``);
      const { turnId } = await harness.send(line, { sessionId, config: config ?? null, troubleWait });
      last = turnId;
      config = undefined; // started now: later messages go to the existing session
      // At a terminal, what a person types while the turn runs goes to it (piped input waits for its prompt).
      if (process.stdin.isTTY) lines.onFree = (text) => void steer(harness, sessionId, text);
      try {
        process.exitCode = await driveTurn(harness, sessionId, turnId, { json: false, prompter, notes, ctx, waitTimeoutMs: timeoutMs });
      } finally {
        lines.onFree = undefined;
      }
    }
  } finally {
    rl.close();
  }
  say(`left session ${sessionId}; continue it with: harness chat --session ${sessionId}`);
}

/**
 * A line typed while the turn runs: queued for its next step, or with `/interrupt TEXT` given at
 * once with the step's pending calls cancelled; one line says which (or why not) and the turn goes on.
 */
async function steer(harness: HarnessClient, sessionId: string, line: string): Promise<void> {
  const interrupt = /^\/interrupt\s+/.exec(line);
  const text = interrupt ? line.slice(interrupt[0].length) : line;
  try {
    checkMessage(text);
    const sent = await harness.send(text, { sessionId, whileRunning: interrupt ? 'interrupt' : 'queue' });
    if (sent.steered === 'interrupt') say(`interrupted ${sent.turnId}: its step's calls are cancelled and it goes on with your message`);
    else if (sent.steered) say(`queued for ${sent.turnId}: the model reads it at its next step`);
    else say(`the turn had ended: sent as ${sent.turnId}`);
  } catch (err) {
    say(`error: ${(err as Error).message.split('\n')[0]}; the turn goes on`);
  }
}

/** `p`, or a rejection with the signal's reason when it aborts first (the line prompt then closes). */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      say(''); // the cursor is still on the prompt line
      reject(signal.reason);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
