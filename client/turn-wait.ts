/**
 * Waiting for a turn from a client: until it ends or stops to wait on a human, reporting steps
 * and a slow model call on the way, and riding out Temporal outages and absent workers.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { TurnResult } from '../deterministic/session';
import type { SessionState, TurnState } from '../deterministic/session-state';
import { rootCauseMessage, splitNotDeclared } from '../deterministic/errors';
import { stateQuery, turnStateQuery } from '../deterministic/messages';
import { UserError } from '../machine/errors';
import { sessionOfTurnId } from '../deterministic/turn-id';
import { diagnose, isNoPoller, look, seconds, troubleOf, type Trouble } from './wait-progress';
import { modelProgress, type ModelProgress } from './model-progress';
import { withConfirmedWait } from './turn-record';

/** How a wait for a turn ended: with its result, or with the turn waiting on a human. */
export type TurnOutcome = { kind: 'done'; result: TurnResult } | { kind: 'waiting'; state: TurnState };

/** What waitForTurn reports on the way, and how long it may wait. */
export interface WaitOptions {
  /** How often to look at the turn while all is well (default 250 ms). */
  pollMs?: number;
  /** Stop waiting after this long with a one-line error (the turn goes on); default: no bound. */
  timeoutMs?: number;
  /** The turn reached a new step. */
  onStep?: (step: number) => void;
  /**
   * Looking at the turn failed in a way waiting may cure (Temporal unreachable, no worker
   * answering): called after each failed look; called with undefined once looks work again.
   */
  onTrouble?: (trouble: Trouble | undefined) => void;
  /** The turn's pending model call (attempt, endpoint, last failure), every couple of seconds while there is one. */
  onModel?: (progress: ModelProgress) => void;
}

/** How long a query may take while waiting (a busy worker answers late; the server gives up at 30 s). */
const QUERY_MS = 20_000;
/** How long a describe may take while waiting. */
const DESCRIBE_MS = 10_000;
/** Longest pause between looks while something is wrong. */
const MAX_BACKOFF_MS = 8_000;
/** How often the pending model call is looked at (a describe on the server). */
const MODEL_LOOK_MS = 2_000;

/**
 * Waits until the turn ends or stops to wait on a human; reports step progress on the way.
 * Outages of Temporal and absent workers are ridden out with backoff (reported through
 * onTrouble): the turn is durable and goes on, so only `timeoutMs` ends the wait early.
 */
export async function waitForTurn(client: Client, turnId: string, opts: WaitOptions = {}): Promise<TurnOutcome> {
  const handle = client.workflow.getHandle(turnId);
  const pollMs = opts.pollMs ?? 250;
  const deadline = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
  let poll: ResultPoll | undefined;
  let trouble: Trouble | undefined;
  let delay = pollMs;
  let lastStep = 0;
  let lastModelLook = 0;
  let pollRestarted = false;
  for (;;) {
    // The result arrives by long poll; a connection loss breaks it, so it is restarted.
    poll ??= resultPoll(handle);
    const left = deadline - Date.now();
    if (left <= 0) throw waitTimedOut(turnId, opts.timeoutMs ?? 0, trouble);
    await pause(Math.min(delay, left), poll.settled);
    let now: Trouble | undefined;
    if (poll.result) {
      if (trouble) opts.onTrouble?.(undefined);
      await sessionCaughtUp(client, turnId);
      return { kind: 'done', result: poll.result };
    }
    if (poll.failed) {
      now = troubleOf(client, poll.failure, 'server');
      if (!now) {
        const { problem, hint } = splitNotDeclared(rootCauseMessage(poll.failure));
        throw new UserError(`turn ${turnId} failed: ${problem}`, hint || `inspect it with \`harness status ${sessionOfTurnId(turnId)}\``);
      }
      now = (await diagnose(client, turnId, 'server', { noPoller: isNoPoller(poll.failure) })) ?? now;
      poll = undefined;
    }
    if (!now) {
      const state = await look(client, turnId, 'query', () => handle.query(turnStateQuery) as Promise<TurnState>, QUERY_MS);
      if (!state.ok) now = state.trouble;
      else {
        // A sub-agent's wait as that sub-agent says it: a signal to this turn may claim one that is not there.
        // (A history that cannot be read now leaves the wait unconfirmed until the next look.)
        const s = await withConfirmedWait(client, turnId, state.value).catch(() => ({ ...state.value, status: 'running' as const }));
        if (s.step !== lastStep) opts.onStep?.((lastStep = s.step));
        if (s.status === 'waiting_for_user' || s.status === 'waiting_for_approval' || s.status === 'waiting_for_budget') {
          if (trouble) opts.onTrouble?.(undefined);
          return { kind: 'waiting', state: s };
        }
        if (s.status === 'done' && !pollRestarted) {
          // Done by its own account: a long poll that missed the end (a dropped connection
          // that never reported) is replaced once by one that reads the closed workflow.
          pollRestarted = true;
          poll = undefined;
        }
        if (opts.onModel && s.status === 'running' && Date.now() - lastModelLook >= MODEL_LOOK_MS) {
          lastModelLook = Date.now();
          const d = await look(client, turnId, 'server', () => handle.describe(), DESCRIBE_MS);
          if (!d.ok) now = d.trouble;
          else {
            const progress = modelProgress(d.value);
            if (progress) opts.onModel(progress);
          }
        }
      }
    }
    if (now) {
      trouble = now;
      opts.onTrouble?.(now);
      delay = Math.min(Math.max(delay * 2, 1_000), MAX_BACKOFF_MS);
    } else {
      if (trouble) opts.onTrouble?.(undefined);
      trouble = undefined;
      delay = pollMs;
    }
  }
}

/** The turn's result as a long poll whose outcome can be read without awaiting it. */
interface ResultPoll {
  settled: Promise<void>;
  result?: TurnResult;
  failed?: boolean;
  failure?: unknown;
}

function resultPoll(handle: ReturnType<Client['workflow']['getHandle']>): ResultPoll {
  const poll: ResultPoll = { settled: Promise.resolve() };
  poll.settled = handle.result().then(
    (r) => void (poll.result = r as TurnResult),
    (e) => {
      poll.failed = true;
      poll.failure = e;
    },
  );
  return poll;
}

/** Sleeps `ms`, or less when `until` settles first; leaves no timer behind. */
async function pause(ms: number, until: Promise<unknown>): Promise<void> {
  const stop = new AbortController();
  try {
    await Promise.race([
      until,
      sleep(ms, undefined, { signal: stop.signal }).catch(() => undefined),
    ]);
  } finally {
    stop.abort();
  }
}

function waitTimedOut(turnId: string, timeoutMs: number, trouble: Trouble | undefined): UserError {
  return new UserError(
    `stopped waiting for turn ${turnId} after ${seconds(timeoutMs)}${trouble ? ` (${trouble.text})` : ''}; the session keeps going without you`,
    `see how it went later with \`harness status ${sessionOfTurnId(turnId)}\``,
  );
}

/**
 * A turn's result reaches its session one workflow task after the turn ends; waiting for
 * the session to record it means the next message is accepted right away.
 */
async function sessionCaughtUp(client: Client, turnId: string, timeoutMs = 10_000): Promise<void> {
  const session = client.workflow.getHandle(sessionOfTurnId(turnId));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const s = (await client.withDeadline(Math.min(deadline, Date.now() + 2_000), () => session.query(stateQuery))) as SessionState;
      if (s.currentTurnId !== turnId) return;
    } catch {
      return; // a turn started on its own, a session that has gone, or nobody answering: nothing to wait for
    }
    await sleep(25);
  }
}
