/**
 * What a waiting command says on stderr while it waits: one line when a problem starts (and a
 * reminder each minute while it lasts), one when it clears, and the model call's progress.
 */
import { escapeForTerminal } from '../machine/terminal/escape';
import { seconds, type Trouble } from '../client/wait-progress';
import { type ModelProgress } from '../client/model-progress';
import { say } from './output';

/** A model call is worth a line once it has waited this long (most answer well before). */
const SLOW_MODEL_MS = 5_000;
/** Progress lines at most this often. */
const MODEL_LINE_EVERY_MS = 3_000;
/** An ongoing problem is said again this often, with how long it has lasted. */
const TROUBLE_REMINDER_MS = 60_000;
/** A problem of the same kind said in other words (a worker that stopped answering is now known gone) waits at least this long. */
const REWORDED_MS = 15_000;

/**
 * Turns what a wait observes into lines on stderr: one when a problem starts (and a reminder
 * each minute while it lasts), one when it clears, and one when the model call's attempt,
 * endpoint or last failure changes — never more often than every few seconds.
 */
export class WaitNotes {
  private current?: Trouble;
  private since = 0;
  private saidAt = 0;
  private saidGist = '';
  private modelSaid = '';
  private modelSaidAt = 0;

  trouble(t: Trouble | undefined): void {
    const now = Date.now();
    if (!t) {
      if (this.current) say(`… ${this.current.kind === 'temporal' ? 'Temporal answers again' : 'a worker answers again'}`);
      this.current = undefined;
      this.saidGist = '';
      return;
    }
    if (this.current?.kind !== t.kind) {
      this.since = now;
      this.saidAt = 0;
    }
    this.current = t;
    // The words without their numbers: `last poll 20 s ago` and `… 40 s ago` say the same.
    const gist = t.text.replace(/\d+(\.\d+)?/g, '#');
    if (now - this.saidAt < (gist === this.saidGist ? TROUBLE_REMINDER_MS : REWORDED_MS)) return;
    const lasting = now - this.since >= TROUBLE_REMINDER_MS ? ` for ${seconds(Math.round((now - this.since) / 1000) * 1000)}` : '';
    say(escapeForTerminal(`waiting: ${t.text}${lasting}; retrying`));
    this.saidAt = now;
    this.saidGist = gist;
  }

  model(p: ModelProgress): void {
    const now = Date.now();
    const waited = p.since ? now - p.since.getTime() : 0;
    // A first attempt is a normal call until it is slow; say nothing about those.
    if (p.attempt <= 1 && !p.lastFailure && !p.nextAt && waited < SLOW_MODEL_MS) return;
    const line = modelLine(p, now);
    // A countdown alone is no news: the line is said again when anything else in it changes.
    const gist = line.replace(/\d+(\.\d+)? (s|min)\b/g, '#');
    if (gist === this.modelSaid || now - this.modelSaidAt < MODEL_LINE_EVERY_MS) return;
    say(escapeForTerminal(line));
    this.modelSaid = gist;
    this.modelSaidAt = now;
  }
}

/**
 * The model call's progress in one line: the attempt (requests of the call, the one running or
 * the next), of how many when an outage does not stretch them, the outage it waits out and for
 * how long, and why the last attempt failed. E.g. `… waiting for the model at https://… (attempt
 * 3 in 7 s: rate limited (HTTP 429), retried for 41 s more; last failure: …)`.
 */
export function modelLine(p: ModelProgress, now = Date.now()): string {
  const next = p.nextAt && p.nextAt.getTime() > now ? p.nextAt.getTime() - now : undefined;
  const of = p.maxAttempts && !p.outage && p.attempt <= p.maxAttempts ? ` of ${p.maxAttempts}` : '';
  const left = p.retryUntil ? Math.max(0, p.retryUntil.getTime() - now) : undefined;
  const outage = p.outage && next !== undefined ? `: ${p.outage}${left !== undefined ? `, retried for ${seconds(roundUp(left))} more` : ''}` : '';
  return (
    `… waiting for the model at ${p.endpoint ?? 'its endpoint'} (attempt ${p.attempt}${of}${next !== undefined ? ` in ${seconds(roundUp(next))}` : ''}${outage}` +
    `${p.lastFailure ? `; last failure: ${p.lastFailure}` : ''})`
  );
}

/** Whole seconds, rounded up (a wait of 6.2 s is said as 7 s: never sooner than it is). */
function roundUp(ms: number): number {
  return Math.ceil(ms / 1000) * 1000;
}
