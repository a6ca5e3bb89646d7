/**
 * `harness eval` off a terminal: whole progress lines, one per new count and at least one every
 * 30 s while nothing finishes. A ten-minute eval is played on a fake clock, polled as followEval
 * polls (every 500 ms).
 */
import { describe, expect, it } from 'vitest';
import { evalProgressPrinter } from '../../cli/eval-progress';
import type { EvalProgress } from '../../deterministic/eval';

const progress = (done: number, running: number): EvalProgress =>
  ({ eval_id: 'eval-x', total: 4, done, passed: done, failed: 0, running, concurrency: 4, started_at: '2026-01-01T00:00:00.000Z' }) as EvalProgress;

/** Plays an eval whose trials finish at `finishes` (ms), polled every 500 ms until `endMs`; the lines said with their times. */
function play(finishes: number[], endMs: number, tty = false): { at: number; line: string }[] {
  let clock = 1_000_000;
  const start = clock;
  const lines: { at: number; line: string }[] = [];
  const printer = evalProgressPrinter({
    tty,
    now: () => clock,
    say: (line) => lines.push({ at: clock - start, line }),
    sayInPlace: (line) => lines.push({ at: clock - start, line: `\r${line}` }),
  });
  for (let t = 0; t <= endMs; t += 500) {
    clock = start + t;
    const done = finishes.filter((f) => f <= t).length;
    printer(progress(done, 4 - done));
  }
  return lines;
}

describe('eval progress off a terminal', () => {
  it('says a line at least every 30 s while long trials run, and each new count', () => {
    const minutes10 = 10 * 60_000;
    const lines = play([9 * 60_000, 9 * 60_000 + 2_000, minutes10, minutes10], minutes10);
    expect(lines[0]).toEqual({ at: 0, line: expect.stringContaining('0/4 · 0 passed · 0 failed · 4 running · 0 s') });
    const gaps = lines.slice(1).map((l, i) => l.at - lines[i]!.at);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(30_000);
    expect(lines.some((l) => /0\/4 .* · 300 s/.test(l.line))).toBe(true);
    // The count at nine minutes is said at once; the next, two seconds later, waits out the 5 s gap.
    expect(lines.find((l) => l.line.includes('1/4'))?.at).toBe(9 * 60_000);
    expect(lines.find((l) => l.line.includes('2/4'))?.at).toBe(9 * 60_000 + 5_000);
    expect(lines.at(-1)?.line).toContain('4/4');
    // About one line per 30 s, not one per poll.
    expect(lines.length).toBeLessThan(30);
  });

  it('on a terminal redraws the line at every poll instead', () => {
    const lines = play([], 2_000, true);
    expect(lines).toHaveLength(5);
    expect(lines.every((l) => l.line.startsWith('\r'))).toBe(true);
  });
});
