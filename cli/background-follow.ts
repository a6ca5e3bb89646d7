/**
 * `run` and `chat` stay with a session whose background sub-agents still run once the turn they
 * waited for is done: a child's end that starts a turn of its own (the session was idle) is
 * followed like the first turn, its steps and its answer shown. An end that reaches a running turn
 * is that turn's, already followed. They stop following when no child runs any more, when each one
 * left waits on a person (a line says so), or at the wait's timeout (the session goes on).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { HarnessClient } from '../api/client';
import { stateQuery } from '../deterministic/messages';
import type { SessionState } from '../deterministic/session-state';
import { agentPathLabel } from '../deterministic/sub-agents';
import { EXIT, say } from './output';
import { seconds } from '../client/wait-progress';
import { driveTurn, type DriveOptions } from './wait';

const POLL_MS = 250;
/**
 * Polls made after no child runs any more: a child's end and the turn it starts are one session
 * task, yet the query may answer between the two (the turn asked for, not yet started).
 */
const SETTLE_POLLS = 4;

export type NextTurn = { turnId: string } | { stop: string } | undefined;

/** The turn number of a session's turn id (`<session>/turn-N`). */
export function turnNumber(turnId: string | undefined): number | undefined {
  const m = turnId ? /\/turn-(\d+)$/.exec(turnId) : null;
  return m ? Number(m[1]) : undefined;
}

/**
 * The session's next turn after turn `after` once one starts while its background children run;
 * `stop` with a line to say when they all wait on a person (unless `throughWaits`: someone may
 * decide elsewhere, and the answer start a turn) or the deadline passes; undefined when none runs
 * (or `signal` aborts).
 */
export async function nextBackgroundTurn(harness: HarnessClient, sessionId: string, after: number, deadline: number, o: { signal?: AbortSignal; throughWaits?: boolean } = {}): Promise<NextTurn> {
  const { signal } = o;
  let idle = 0;
  for (;;) {
    if (signal?.aborted) return undefined;
    const s = await harness.temporal.workflow.getHandle(sessionId).query(stateQuery).catch(() => undefined) as SessionState | undefined;
    if (s) {
      if (s.turnCount > after || (turnNumber(s.currentTurnId) ?? 0) > after) return { turnId: `${sessionId}/turn-${after + 1}` };
      const running = s.background ?? [];
      if (s.status === 'ended') return undefined;
      if (!running.length && ++idle > SETTLE_POLLS) return undefined;
      if (!o.throughWaits && running.length && running.every((c) => c.waiting)) {
        const names = running.map((c) => agentPathLabel(c.path)).join(', ');
        return { stop: `background sub-agent(s) ${names} wait on a person: see \`harness status ${sessionId}\`; their answers start turns of the session` };
      }
    }
    if (Date.now() > deadline) return { stop: `stopped waiting for the session's background sub-agents; their answers start turns of the session (see \`harness status ${sessionId}\`)` };
    await sleep(POLL_MS, undefined, signal ? { signal } : undefined).catch(() => undefined);
  }
}

/**
 * After the turn `turnId` ended with exit code `code`: follows each turn the session's background
 * children start while they run, as driveTurn follows a turn; the last turn's exit code.
 */
export async function followBackground(harness: HarnessClient, sessionId: string, turnId: string, o: DriveOptions, code: number): Promise<number> {
  let after = turnNumber(turnId);
  if (after === undefined || code === EXIT.waiting || o.json) return code;
  const timeoutMs = o.waitTimeoutMs ?? 3600_000;
  let announced = false;
  for (;;) {
    const s = await harness.temporal.workflow.getHandle(sessionId).query(stateQuery).catch(() => undefined) as SessionState | undefined;
    if (!announced && s?.background?.some((c) => !c.waiting)) {
      announced = true;
      say(`waiting for ${s.background.length} background sub-agent(s) of session ${sessionId} (up to ${seconds(timeoutMs)}; Ctrl-C leaves, the session goes on)`);
    }
    const next = await nextBackgroundTurn(harness, sessionId, after, Date.now() + timeoutMs);
    if (!next) return code;
    if ('stop' in next) {
      say(next.stop);
      return code;
    }
    say(`session ${sessionId} · ${next.turnId} (a new turn while background sub-agents ran: one answered, or a message arrived)`);
    code = await driveTurn(harness, sessionId, next.turnId, o);
    if (code === EXIT.waiting) return code;
    after++;
  }
}

/**
 * `chat` at its prompt after turn `after`: the next line typed, or the session's next turn when
 * one starts first while background children run (the prompt is then withdrawn; a line typed
 * meanwhile waits for the next one).
 */
export async function lineOrBackgroundTurn(
  harness: HarnessClient,
  sessionId: string,
  after: number | undefined,
  read: (signal: AbortSignal) => Promise<string | undefined>,
): Promise<{ line: string | undefined } | { turnId: string }> {
  const reading = new AbortController();
  if (after === undefined) return { line: await read(reading.signal) };
  const watching = new AbortController();
  const turn = nextBackgroundTurn(harness, sessionId, after, Infinity, { signal: watching.signal, throughWaits: true }).then((next) => {
    // Nothing to follow: only the line can come.
    return next && 'turnId' in next ? next : new Promise<never>(() => undefined);
  });
  const line = read(reading.signal).then((l) => ({ line: l }));
  const first = await Promise.race([line, turn]);
  if ('turnId' in first) {
    reading.abort(new Error('a turn started'));
    await line.catch(() => undefined);
  } else watching.abort();
  return first;
}
