/**
 * How `harness eval` shows its progress. On a terminal, one line redrawn in place. Elsewhere (a
 * CI log, a pipe) whole lines: one when the count of finished trials changes (at most every
 * 5 s) and, while nothing finishes, one at least every 30 s, so a log of trials that run for
 * minutes still shows the eval is alive and how long it has run.
 */
import type { EvalProgress } from '../deterministic/eval';
import { progressLine } from '../evals/runner/run';

export interface ProgressOutput {
  tty: boolean;
  /** A whole line (not on a terminal). */
  say(line: string): void;
  /** The line redrawn in place (on a terminal). */
  sayInPlace(line: string): void;
  /** The clock (tests give their own). */
  now?: () => number;
  /** Longest silence between two lines off a terminal (default 30 s). */
  heartbeatMs?: number;
}

/** Lines closer than this say only a new count. */
const MIN_GAP_MS = 5_000;
const HEARTBEAT_MS = 30_000;

/** A progress callback for followEval that prints as above. */
export function evalProgressPrinter(out: ProgressOutput): (p: EvalProgress) => void {
  const now = out.now ?? Date.now;
  const heartbeat = out.heartbeatMs ?? HEARTBEAT_MS;
  const t0 = now();
  let said: number | undefined;
  let saidAt = -Infinity;
  return (p) => {
    const at = now();
    const line = progressLine(p, at - t0);
    if (out.tty) return out.sayInPlace(line);
    const changed = p.done !== said && at - saidAt >= MIN_GAP_MS;
    if (changed || at - saidAt >= heartbeat) {
      out.say(line);
      said = p.done;
      saidAt = at;
    }
  };
}
