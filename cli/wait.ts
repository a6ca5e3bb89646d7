/**
 * Drives a turn to an end from the CLI: waits, asks questions and approvals inline in a
 * terminal, or reports what is pending and exits 3 when nobody is there to decide. While it
 * waits it says, on stderr, what holds the turn up: Temporal or the worker not answering,
 * or a model call being retried.
 */
import { existsSync } from 'node:fs';
import type { TurnResult } from '../deterministic/session';
import type { Pending, PendingApproval } from '../deterministic/session-state';
import { embeddedFiles } from '../machine/paths';
import { processAlive, readPidFile } from '../machine/pids';
import { UserError } from '../machine/errors';
import { splitNotDeclared } from '../deterministic/errors';
import { TroubleWait } from '../client/trouble-wait';
import { TEMPORAL_HINT } from '../client/session-client';
import type { HarnessClient } from '../api/client';
import { seconds, type Trouble } from '../client/wait-progress';
import type { CliContext } from './context';
import { approvalLines, EXIT, grantLine, print, subAgentOf, printJson, printTurn, say, turnExitCode, turnJson, waitingJson } from './output';
import { WaitNotes } from './wait-notes';
import { decideBudgetInline, sayBudgetWait } from './wait-budget';
import { InputEndedError, type Prompter } from './prompter';
import { DEFAULT_WAIT_TIMEOUT_SEC } from './wait-options';
// The live view's module loads the watch code: only a command that shows it or prompts loads it.
import type { LiveTurn } from './live';
import { liveWanted, stderrColor } from './live-wanted';
import { recordShown } from './shown-calls';

/** Options shared by run, chat, answer, approve and deny. */
export interface DriveOptions {
  json: boolean;
  prompter?: Prompter;
  /** Stop waiting after this long (the turn goes on); default DEFAULT_WAIT_TIMEOUT_SEC. */
  waitTimeoutMs?: number;
  /** Where the wait's lines go (a command that already waited passes its own, so a problem is not said twice). */
  notes?: WaitNotes;
  /** The command's context: with it, inline answers and decisions ride out trouble too (and hints name the right worker). */
  ctx?: Pick<CliContext, 'settings' | 'home'>;
  /** One line per step event while the turn runs (default: on a terminal, without --json); `jsonl` streams them as JSON. */
  live?: boolean | 'jsonl';
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

/**
 * Riding out trouble for a command that waits (see client/trouble-wait.ts): lines through `notes`, and
 * past the deadline one error saying what was waited for (`what`, e.g. `for session s-1`), what
 * it means (`after`) and, as hint, how to cure what held it up.
 */
export function commandTroubleWait(
  ctx: Pick<CliContext, 'settings' | 'home'>,
  notes: WaitNotes,
  timeoutMs: number,
  what: string,
  after: string,
  hint: string,
): TroubleWait {
  return new TroubleWait({
    deadline: Date.now() + timeoutMs,
    onTrouble: (t) => notes.trouble(t),
    giveUp: (t: Trouble | undefined, waited: number) =>
      new UserError(
        `stopped waiting ${what} after ${seconds(Math.round(waited / 1000) * 1000)}${t ? ` (${t.text})` : ''}${after ? `; ${after}` : ''}`,
        t?.kind === 'worker' ? noWorkerHint(ctx) : t?.kind === 'temporal' ? TEMPORAL_HINT : hint,
      ),
  });
}

/** Waits for the turn through the public client; returns the process exit code. */
export async function driveTurn(harness: HarnessClient, sessionId: string, turnId: string, o: DriveOptions): Promise<number> {
  const notes = o.notes ?? new WaitNotes();
  // Each wait between human decisions gets the whole timeout: a person's thinking time is not waiting.
  const timeoutMs = o.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_SEC * 1000;
  // Answers and decisions made inline ride out trouble like the turn's wait does.
  const newTroubleWait = (): TroubleWait | undefined => o.ctx && commandTroubleWait(o.ctx, notes, timeoutMs, `for session ${sessionId}`, '', `see \`harness status ${sessionId}\``);
  // Each step as history records it, beside the wait (which still decides when the turn is done).
  const wanted = o.live ?? liveWanted(o.json);
  const live = wanted ? new (await import('./live')).LiveTurn(harness.temporal, turnId, { prompting: Boolean(o.prompter), color: stderrColor(), jsonl: wanted === 'jsonl', ...(o.ctx ? { home: o.ctx.home } : {}) }) : undefined;
  try {
    return await driveLive(harness, sessionId, turnId, o, notes, timeoutMs, newTroubleWait, live);
  } finally {
    live?.stop();
  }
}

async function driveLive(
  harness: HarnessClient,
  sessionId: string,
  turnId: string,
  o: DriveOptions,
  notes: WaitNotes,
  timeoutMs: number,
  newTroubleWait: () => TroubleWait | undefined,
  live: LiveTurn | undefined,
): Promise<number> {
  for (;;) {
    const out = await harness.wait(turnId, {
      timeoutMs,
      onStep: (step) => {
        if (o.prompter && !o.json && !live) say(`… step ${step}`);
      },
      onTrouble: (t) => notes.trouble(t),
      onModel: (p) => notes.model(p),
    });
    if (out.kind === 'done') {
      // The last steps' lines before the result.
      await live?.finish();
      if (o.json) printJson(turnJson(out.result));
      else printTurn(out.result);
      // printTurn said `error: …` for a failed turn; every error comes with what to do next.
      if (!o.json && out.result.error) say(failureHint(sessionId, out.result));
      return turnExitCode(out.result);
    }
    const pending = out.state.pending!;
    // What is shown here (the lines, the JSON, each prompt) is what `approve <session>` may later decide without ids.
    const shown = (calls: PendingApproval[]) => o.ctx && recordShown(o.ctx.home, sessionId, calls);
    if (!o.prompter) {
      if (pending.kind === 'approvals') shown(pending.calls);
      if (o.json) printJson(waitingJson(sessionId, out.state));
      if (pending.kind === 'question') {
        if (!o.json) print(pending.question);
        say(`[${turnId}] waiting for an answer${subAgentOf(pending)}; the session keeps waiting.`);
        say(`answer with: harness answer ${sessionId} "<your answer>"`);
      } else if (pending.kind === 'budget') {
        sayBudgetWait(sessionId, turnId, pending);
      } else {
        say(`[${turnId}] waiting for approval${subAgentOf(pending)}; the session keeps waiting.`);
        for (const c of pending.calls) {
          for (const l of approvalLines(c, sessionId)) say(`  ${l}`);
          say(`    approve: harness approve ${sessionId} ${c.callId}    deny: harness deny ${sessionId} ${c.callId} --reason "<why>"`);
        }
      }
      return EXIT.waiting;
    }
    try {
      const { decidedOrElsewhere, promptOrElsewhere } = await import('./live');
      // A sub-agent's wait is asked here too, saying whose it is.
      if (pending.agent) say(`[${turnId}] sub-agent ${pending.agent.path.join(' › ')} (turn ${pending.agent.turnId}) asks:`);
      if (pending.kind === 'question') {
        const text = await promptOrElsewhere(live, pending.callId, 'the question', (signal) => o.prompter!.ask(pending.question, signal));
        if (text !== undefined) await decidedOrElsewhere(() => harness.answer(sessionId, text, { troubleWait: newTroubleWait() }), 'the question');
        continue;
      }
      if (pending.kind === 'budget') {
        await decideBudgetInline(harness, sessionId, pending, await o.prompter.raiseBudget?.(pending), newTroubleWait());
        continue;
      }
      for (const call of pending.calls) {
        shown([call]);
        const verdict = await promptOrElsewhere(live, call.callId, `${call.callId} ${call.tool}`, (signal) => o.prompter!.approve(call, signal, sessionId));
        // Decided elsewhere: the turn goes on (or asks for the rest), which the wait finds out.
        if (verdict === undefined) break;
        // Exactly the call shown: its digest makes the turn refuse anything else.
        const decided = await decidedOrElsewhere(
          () =>
            harness.decide(
              sessionId,
              {
                calls: [{ callId: call.callId, digest: call.digest ?? '' }],
                approve: verdict !== 'no',
                ...(verdict === 'always' ? { always: true } : {}),
                ...(verdict === 'no' ? { reason: 'denied at the terminal' } : {}),
              },
              { troubleWait: newTroubleWait() },
            ),
          `${call.callId} ${call.tool}`,
        );
        if (!decided) break;
        for (const g of decided.granted) say(grantLine(g));
      }
    } catch (err) {
      if (err instanceof InputEndedError) throw stillPending(sessionId, pending);
      throw err;
    }
  }
}

/** What to do after a turn ended with an error: retry a failed turn, else go on with the session. */
function failureHint(sessionId: string, r: TurnResult): string {
  const refused = splitNotDeclared(r.error ?? '').hint;
  if (refused) return `hint: ${refused}; then \`harness retry ${r.turnId}\``;
  if (r.terminated_by === 'failed') {
    return `hint: once the cause is fixed (see \`harness trace ${r.turnId}\`), continue the turn from its last good step with \`harness retry ${r.turnId}\`; or send another message with \`harness run --session ${sessionId} "<task>"\``;
  }
  return `hint: the session goes on: see it with \`harness status ${sessionId}\`, or send another message with \`harness run --session ${sessionId} "<task>"\``;
}

/** Ctrl-D (or Ctrl-C) at a prompt: nothing was decided, the turn keeps waiting durably (exit 3). */
function stillPending(sessionId: string, pending: Pending): UserError {
  if (pending.kind === 'budget') {
    return new UserError('the prompt ended without a decision; the turn keeps waiting for its budget', `decide later with: harness approve ${sessionId} --budget +N   or   harness deny ${sessionId} --reason "<why>"`, EXIT.waiting);
  }
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
  harness: HarnessClient,
  sessionId: string,
  turnId: string,
  o: { json?: boolean; wait: boolean; waitTimeout?: number },
  status: string,
  waited: { notes?: WaitNotes; ctx?: Pick<CliContext, 'settings' | 'home'> } = {},
): Promise<number> {
  if (o.wait) {
    return driveTurn(harness, sessionId, turnId, {
      json: Boolean(o.json),
      ...(o.waitTimeout ? { waitTimeoutMs: o.waitTimeout * 1000 } : {}),
      ...(waited.notes ? { notes: waited.notes } : {}),
      ...(waited.ctx ? { ctx: waited.ctx } : {}),
    });
  }
  if (o.json) printJson({ session_id: sessionId, workflow_id: turnId, status });
  else say(`${status}; the turn ${turnId} goes on`);
  return EXIT.ok;
}
