/**
 * Riding out trouble in a command that waits: a query, a describe or an update that fails in
 * a way time may cure (Temporal down, restarting or overloaded, no worker polling) is reported
 * in one line and tried again with backoff, until it works or the command's deadline passes.
 * Only errors that waiting cannot cure (not found, refused, a bug) end the wait early.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { UserError } from '../machine/errors';
import { tcpProbe } from './temporal';
import { addressOf, diagnose, look, seconds, troubleOf, within, type Trouble } from './wait-progress';
import { callsAbort } from './calls-abort';

/** How long a command keeps waiting through trouble, and whom it tells. */
export interface Patience {
  /** Give up at this time (ms since the epoch); Infinity waits for good. */
  deadline: number;
  /** Told each time a call fails in a way waiting may cure, and with undefined once calls work again. */
  onTrouble?: (trouble: Trouble | undefined) => void;
  /** The error when the deadline passes, given the trouble of the moment. */
  giveUp?: (trouble: Trouble | undefined, waitedMs: number) => UserError;
}

/** Longest pause between attempts while something is wrong. */
const MAX_BACKOFF_MS = 8_000;
/** How long an update may be unanswered before the wait looks for what holds it up. */
const SLOW_UPDATE_MS = 3_000;
/** How long reads of Temporal alone may go unanswered before the wait looks whether the server is there. */
const SLOW_READ_MS = 3_000;

/** The state of one wait through trouble: what is wrong now, and the backoff. */
export class TroubleWait {
  private current?: Trouble;
  private delay = 0;
  private readonly started = Date.now();

  constructor(private readonly patience: Patience) {}

  /** Time left before the deadline. */
  left(): number {
    return this.patience.deadline - Date.now();
  }

  /** What is wrong at the moment, if anything. */
  get trouble(): Trouble | undefined {
    return this.current;
  }

  /** Reports the trouble and waits before the next attempt; throws the give-up error once the deadline passes. */
  async troubled(trouble: Trouble): Promise<void> {
    this.current = trouble;
    this.patience.onTrouble?.(trouble);
    this.delay = Math.min(Math.max(this.delay * 2, 1_000), MAX_BACKOFF_MS);
    const left = this.left();
    if (left <= 0) throw this.giveUp();
    await sleep(Math.min(this.delay, left));
    if (this.left() <= 0) throw this.giveUp();
  }

  /** Says what is wrong while a call is still under way (no pause: the call goes on). */
  report(trouble: Trouble): void {
    this.current = trouble;
    this.patience.onTrouble?.(trouble);
  }

  /** Calls work again: says so once, and resets the backoff. */
  clear(): void {
    if (this.current) this.patience.onTrouble?.(undefined);
    this.current = undefined;
    this.delay = 0;
  }

  /** The error for a deadline that passed. */
  giveUp(): UserError {
    const waited = Date.now() - this.started;
    return (
      this.patience.giveUp?.(this.current, waited) ??
      new UserError(`stopped waiting after ${seconds(Math.round(waited / 1000) * 1000)}${this.current ? ` (${this.current.text})` : ''}`, 'try again later')
    );
  }
}

/**
 * look() again and again until it answers: each failure that waiting may cure is reported and
 * waited out (see TroubleWait); any other error is thrown.
 */
export async function lookUntil<T>(client: Client, workflowId: string, call: 'query' | 'server', fn: () => Promise<T>, patienceMs: number, troubleWait: TroubleWait): Promise<T> {
  for (;;) {
    if (troubleWait.left() <= 0) throw troubleWait.giveUp();
    const out = await look(client, workflowId, call, fn, Math.max(1_000, Math.min(patienceMs, troubleWait.left())));
    if (out.ok) {
      troubleWait.clear();
      return out.value;
    }
    await troubleWait.troubled(out.trouble);
  }
}

/** How a call ended: with its value, or with what it threw. */
type Settled<T> = { value: T } | { error: unknown };

/** The call's end as a value: it never rejects. */
function settle<T>(call: Promise<T>): Promise<Settled<T>> {
  return call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

/**
 * What a wait takes from a call that ended: its value (calls work again), or nothing after a
 * failure that waiting may cure was reported and waited out, for the caller to call again; any
 * other error is thrown.
 */
async function takeSettled<T>(client: Client, outcome: Settled<T>, troubleWait: TroubleWait): Promise<{ value: T } | undefined> {
  if ('value' in outcome) {
    troubleWait.clear();
    return outcome;
  }
  const trouble = troubleOf(client, outcome.error, 'server');
  if (!trouble) throw outcome.error;
  await troubleWait.troubled(trouble);
  return undefined;
}

/**
 * Runs `read` (calls of Temporal alone, no worker needed: a listing, a history) until it works,
 * as lookUntil does for one call: a failure that waiting may cure is reported and the whole read
 * made again after a pause; any other error is thrown. The SDK retries a server that is down
 * inside each call for a while, silently: a read still unanswered after a few seconds while
 * nothing listens at the server's address is reported at once.
 */
export async function readUntil<T>(client: Client, read: () => Promise<T>, troubleWait: TroubleWait): Promise<T> {
  for (;;) {
    if (troubleWait.left() <= 0) throw troubleWait.giveUp();
    const stop = callsAbort();
    const attempt = settle(client.withAbortSignal(stop.signal, read));
    let outcome = await within(attempt, SLOW_READ_MS);
    while (!outcome) {
      const down = await unreachable(client);
      if (down) troubleWait.report(down);
      if (troubleWait.left() <= 0) {
        stop.abort();
        throw troubleWait.giveUp();
      }
      outcome = await within(attempt, Math.min(SLOW_READ_MS, troubleWait.left()));
    }
    const done = await takeSettled(client, outcome, troubleWait);
    if (done) return done.value;
  }
}

/** Why nothing answers at the client's address (refused, unresolved, no TCP connection), or undefined when a connection opens. */
async function unreachable(client: Client): Promise<Trouble | undefined> {
  const address = addressOf(client);
  const found = await tcpProbe(address, 2_000);
  const why = found === 'refused' ? 'connection refused' : found === 'unresolved' ? 'host not found' : found === 'timeout' ? 'no TCP connection within 2 s' : undefined;
  return why ? { kind: 'temporal', text: `Temporal at ${address} is unreachable (${why})` } : undefined;
}

/**
 * Sends an update and waits for its result through trouble. An update waits for a worker to
 * accept it, silently: while it is unanswered the wait looks for why (Temporal, no worker) and
 * says so. A send that fails in a way waiting may cure is sent again with the same update id,
 * which Temporal runs at most once. Other errors (a validator's refusal, a closed workflow) are
 * thrown for the caller to word. `send` gets the update id to use.
 */
export async function deliverUpdate<R>(client: Client, workflowId: string, send: (updateId: string, signal: AbortSignal) => Promise<R>, troubleWait: TroubleWait): Promise<R> {
  const updateId = randomUUID();
  for (;;) {
    const stop = new AbortController();
    const sent = settle(send(updateId, stop.signal));
    let outcome = await within(sent, SLOW_UPDATE_MS);
    while (!outcome) {
      try {
        if (troubleWait.left() <= 0) throw troubleWait.giveUp();
        const trouble = await diagnose(client, workflowId, 'query');
        if (trouble) await troubleWait.troubled(trouble);
        outcome = await within(sent, trouble ? 0 : Math.min(SLOW_UPDATE_MS, Math.max(0, troubleWait.left())));
      } catch (err) {
        stop.abort();
        // Temporal may hold the update until a worker takes it: say so rather than "nothing happened".
        if (err instanceof UserError) throw new UserError(`${err.message}; the request was sent and may still arrive once things recover`, err.hint, err.exitCode);
        throw err;
      }
    }
    const done = await takeSettled(client, outcome, troubleWait);
    if (done) return done.value;
  }
}
