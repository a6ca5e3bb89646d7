/**
 * Drives a turn to an end from the CLI: waits, asks questions and approvals inline in a
 * terminal, or reports what is pending and exits 3 when nobody is there to decide. While it
 * waits it says, on stderr, what holds the turn up: Temporal or the worker not answering,
 * or a model call being retried.
 */
import { createInterface } from 'node:readline/promises';
import { existsSync } from 'node:fs';
import { InvalidArgumentError, Option } from 'commander';
import type { Client } from '@temporalio/client';
import type { Pending, PendingApproval } from '../common/session';
import { embeddedFiles } from '../lib/embedded';
import { processAlive, readPidFile } from '../lib/pids';
import { UserError } from '../lib/errors';
import { answerQuestion, decideApprovals, waitForTurn } from '../lib/session-client';
import { seconds, type ModelProgress, type Trouble } from '../lib/wait-progress';
import type { CliContext } from './context';
import { escapeForTerminal } from '../lib/terminal/escape';
import { terminalString } from '../lib/terminal/text';
import { approvalLine, EXIT, grantLine, print, printJson, printTurn, say, turnExitCode, turnJson, waitingJson } from './output';

/** A person's verdict on one call. */
export type Verdict = 'yes' | 'no' | 'always';

/** How to reach the person at the terminal; absent when nobody is there. */
export interface Prompter {
  ask(question: string): Promise<string>;
  approve(call: PendingApproval): Promise<Verdict>;
}

/** The person's input ended (Ctrl-D) while a prompt waited for it. */
export class InputEndedError extends Error {
  override name = 'InputEndedError';
  constructor() {
    super('input ended');
  }
}

/** Options shared by run, chat, answer, approve and deny. */
export interface DriveOptions {
  json: boolean;
  prompter?: Prompter;
  /** Stop waiting after this long (the turn goes on); default DEFAULT_WAIT_TIMEOUT_SEC. */
  waitTimeoutMs?: number;
}

/**
 * How long a command waits for a turn by default. Long enough for a turn of many model calls
 * and for an outage of the server or worker to pass; the turn goes on if we stop waiting.
 */
export const DEFAULT_WAIT_TIMEOUT_SEC = 3600;

/** A positive number of seconds (at most 30 days). */
export function parseWaitTimeout(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 30 * 24 * 3600) throw new InvalidArgumentError('expected a number of seconds greater than 0');
  return n;
}

/** The `--wait-timeout <seconds>` option of commands that wait for a turn. */
export function waitTimeoutOption(): Option {
  return new Option('--wait-timeout <seconds>', 'stop waiting for the turn after this long (the session keeps going)')
    .argParser(parseWaitTimeout)
    .default(DEFAULT_WAIT_TIMEOUT_SEC);
}

/** What to do when no worker polls the task queue, for this deployment. */
export function noWorkerHint(ctx: Pick<CliContext, 'settings' | 'home'>): string {
  return ctx.settings.embedded
    ? `start one with \`harness worker\` (or \`harness dev\`); the background worker logs to ${embeddedFiles(ctx.home).workerLog}`
    : 'start one with `harness worker` (same TEMPORAL_ADDRESS and HARNESS_TASK_QUEUE), or `harness dev`, or unset TEMPORAL_ADDRESS to use the embedded server';
}

/**
 * Whether the embedded background worker is still starting: its process runs but has not said
 * ready yet (a loaded machine, many commands starting at once). Then waiting is the cure.
 */
export function workerStarting(ctx: Pick<CliContext, 'settings' | 'home'>): boolean {
  if (!ctx.settings.embedded) return false;
  const files = embeddedFiles(ctx.home);
  const pid = readPidFile(files.workerPid);
  return pid !== undefined && processAlive(pid) && !existsSync(files.workerReady);
}

/** Waits for the turn; returns the process exit code. */
export async function driveTurn(client: Client, sessionId: string, turnId: string, o: DriveOptions): Promise<number> {
  const notes = new WaitNotes();
  for (;;) {
    const out = await waitForTurn(client, turnId, {
      timeoutMs: o.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_SEC * 1000,
      onStep: (step) => {
        if (o.prompter && !o.json) say(`… step ${step}`);
      },
      onTrouble: (t) => notes.trouble(t),
      onModel: (p) => notes.model(p),
    });
    if (out.kind === 'done') {
      if (o.json) printJson(turnJson(out.result));
      else printTurn(out.result);
      // printTurn said `error: …` for a failed turn; every error comes with what to do next.
      if (!o.json && out.result.error) say(`hint: the session goes on: see it with \`harness status ${sessionId}\`, or send another message with \`harness run --session ${sessionId} "<task>"\``);
      return turnExitCode(out.result);
    }
    const pending = out.state.pending!;
    if (!o.prompter) {
      if (o.json) printJson(waitingJson(sessionId, out.state));
      if (pending.kind === 'question') {
        if (!o.json) print(pending.question);
        say(`[${turnId}] waiting for an answer; the session keeps waiting.`);
        say(`answer with: harness answer ${sessionId} "<your answer>"`);
      } else {
        say(`[${turnId}] waiting for approval; the session keeps waiting.`);
        for (const c of pending.calls) {
          say(`  ${approvalLine(c)}`);
          say(`    approve: harness approve ${sessionId} ${c.callId}    deny: harness deny ${sessionId} ${c.callId} --reason "<why>"`);
        }
      }
      return EXIT.waiting;
    }
    try {
      if (pending.kind === 'question') {
        await answerQuestion(client, sessionId, await o.prompter.ask(pending.question));
        continue;
      }
      for (const call of pending.calls) {
        const verdict = await o.prompter.approve(call);
        // Exactly the call shown: its digest makes the turn refuse anything else.
        const { granted } = await decideApprovals(client, sessionId, {
          calls: [{ callId: call.callId, digest: call.digest ?? '' }],
          approve: verdict !== 'no',
          ...(verdict === 'always' ? { always: true } : {}),
          ...(verdict === 'no' ? { reason: 'denied at the terminal' } : {}),
        });
        for (const g of granted) say(grantLine(g));
      }
    } catch (err) {
      if (err instanceof InputEndedError) throw stillPending(sessionId, pending);
      throw err;
    }
  }
}

/** Ctrl-D (or Ctrl-C) at a prompt: nothing was decided, the turn keeps waiting durably (exit 3). */
function stillPending(sessionId: string, pending: Pending): UserError {
  return pending.kind === 'question'
    ? new UserError('the prompt ended without an answer; the question stays pending and the session keeps waiting', `answer later with: harness answer ${sessionId} "<your answer>"`, EXIT.waiting)
    : new UserError(
        'the prompt ended without a decision; the approval stays pending and the session keeps waiting',
        `decide later with: harness approve ${sessionId}   or   harness deny ${sessionId} --reason "<why>"`,
        EXIT.waiting,
      );
}

/** After a human decision: return at once (`--no-wait`) or wait for the turn like `run`. */
export async function followTurn(
  client: Client,
  sessionId: string,
  turnId: string,
  o: { json?: boolean; wait: boolean; waitTimeout?: number },
  status: string,
): Promise<number> {
  if (o.wait) return driveTurn(client, sessionId, turnId, { json: Boolean(o.json), ...(o.waitTimeout ? { waitTimeoutMs: o.waitTimeout * 1000 } : {}) });
  if (o.json) printJson({ session_id: sessionId, workflow_id: turnId, status });
  else say(`${status}; the turn ${turnId} goes on`);
  return EXIT.ok;
}

/** A model call is worth a line once it has waited this long (most answer well before). */
const SLOW_MODEL_MS = 5_000;
/** Progress lines at most this often. */
const MODEL_LINE_EVERY_MS = 3_000;
/** An ongoing problem is said again this often, with how long it has lasted. */
const TROUBLE_REMINDER_MS = 60_000;

/**
 * Turns what a wait observes into lines on stderr: one when a problem starts (and a reminder
 * each minute while it lasts), one when it clears, and one when the model call's attempt,
 * endpoint or last failure changes — never more often than every few seconds.
 */
class WaitNotes {
  private current?: Trouble;
  private since = 0;
  private saidAt = 0;
  private modelSaid = '';
  private modelSaidAt = 0;

  trouble(t: Trouble | undefined): void {
    const now = Date.now();
    if (!t) {
      if (this.current) say(`… ${this.current.kind === 'temporal' ? 'Temporal answers again' : 'a worker answers again'}`);
      this.current = undefined;
      return;
    }
    if (this.current?.kind !== t.kind) {
      this.since = now;
      this.saidAt = 0;
    }
    this.current = t;
    if (now - this.saidAt < TROUBLE_REMINDER_MS) return;
    const lasting = now - this.since >= TROUBLE_REMINDER_MS ? ` for ${seconds(Math.round((now - this.since) / 1000) * 1000)}` : '';
    say(escapeForTerminal(`waiting: ${t.text}${lasting}; retrying`));
    this.saidAt = now;
  }

  model(p: ModelProgress): void {
    const now = Date.now();
    const waited = p.since ? now - p.since.getTime() : 0;
    // A first attempt is a normal call until it is slow; say nothing about those.
    if (p.attempt <= 1 && !p.lastFailure && waited < SLOW_MODEL_MS) return;
    const line =
      `… waiting for the model at ${p.endpoint ?? 'its endpoint'} (attempt ${p.attempt}${p.maxAttempts ? ` of ${p.maxAttempts}` : ''}` +
      `${p.lastFailure ? `; last failure: ${p.lastFailure}` : ''})`;
    if (line === this.modelSaid || now - this.modelSaidAt < MODEL_LINE_EVERY_MS) return;
    say(escapeForTerminal(line));
    this.modelSaid = line;
    this.modelSaidAt = now;
  }
}

/** Reads answers from a line source (the terminal, or chat's own reader); `onEnd` runs when it ends. */
export function linePrompter(
  readLine: (prompt: string) => Promise<string | undefined>,
  onEnd: () => never = () => {
    throw new InputEndedError();
  },
): Prompter {
  const line = async (prompt: string): Promise<string> => {
    for (;;) {
      const text = await readLine(prompt);
      if (text === undefined) return onEnd();
      if (text.trim()) return text.trim();
    }
  };
  return {
    ask: (question) => line(`? ${escapeForTerminal(question, { keepNewlines: true })}\n> `),
    async approve(call) {
      for (;;) {
        const a = (await line(`approve ${approvalLine(call)}\n  [y]es / [n]o / [a]lways for this session > `)).toLowerCase();
        if (['y', 'yes'].includes(a)) return 'yes';
        if (['n', 'no'].includes(a)) return 'no';
        if (['a', 'always'].includes(a)) return 'always';
      }
    },
  };
}

/** A prompter on the process terminal, or undefined when stdin/stdout are not a TTY (or JSON was asked). */
export function terminalPrompter(json: boolean): Prompter | undefined {
  if (json || !(process.stdin.isTTY && process.stdout.isTTY)) return undefined;
  return linePrompter(async (prompt) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      // readline writes the prompt itself: escaped here like everything the writers print.
      return await rl.question(terminalString(prompt));
    } catch (err) {
      // Ctrl-D (end of input) and Ctrl-C at the prompt abort the question: nothing was decided.
      if ((err as { code?: string }).code === 'ABORT_ERR') {
        say(''); // the cursor is still on the prompt line
        return undefined;
      }
      throw err;
    } finally {
      rl.close();
    }
  });
}
