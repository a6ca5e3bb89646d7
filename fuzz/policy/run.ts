/**
 * One differential run: generate commands, decide each as a new session under the default
 * policy would, run the allowed ones in the tracer, and collect every disagreement between what
 * the policy claimed and what the command did. Shared by the test and `npm run fuzz:policy`.
 */
import { performance } from 'node:perf_hooks';
import type { Decision } from '../../deterministic/policy/decide';
import { generateCommands } from './generate';
import { compare, judgeAsNewSession, type Disagreement } from './judge';
import type { Tracer, TraceResult } from './tracer';

export interface RunSummary {
  generated: number;
  allowed: number;
  asked: number;
  denied: number;
  disagreements: Disagreement[];
  /** Allowed commands that hit the per-command time limit (their traces end there). */
  timedOut: number;
  decideMs: number;
  traceMs: number;
  /** Wall time per traced command, driver overhead included. */
  perTracedMs: number;
}

export interface RunOptions {
  seed: number;
  count: number;
  tracer: Tracer;
  /** Commands traced per progress report. */
  chunk?: number;
  onProgress?: (traced: number, total: number, disagreements: number) => void;
}

export async function runDifferential(o: RunOptions): Promise<RunSummary> {
  const commands = generateCommands(o.seed, o.count);
  const t0 = performance.now();
  const decided: [string, Decision][] = commands.map((c) => [c, judgeAsNewSession(c)]);
  const decideMs = performance.now() - t0;
  const allowed = decided.filter(([, d]) => d.decision === 'allow');
  const count = (k: string) => decided.filter(([, d]) => d.decision === k).length;
  const t1 = performance.now();
  const results: TraceResult[] = [];
  const disagreements: Disagreement[] = [];
  const chunk = o.chunk ?? 500;
  for (let i = 0; i < allowed.length; i += chunk) {
    const part = allowed.slice(i, i + chunk);
    const got = await o.tracer.trace(part.map(([c]) => c));
    got.forEach((r, j) => {
      const d = compare(part[j]![1], r);
      if (d) disagreements.push(d);
    });
    results.push(...got);
    o.onProgress?.(results.length, allowed.length, disagreements.length);
  }
  const traceMs = performance.now() - t1;
  return {
    generated: commands.length,
    allowed: allowed.length,
    asked: count('ask'),
    denied: count('deny'),
    disagreements,
    timedOut: results.filter((r) => r.timedOut).length,
    decideMs,
    traceMs,
    perTracedMs: allowed.length ? traceMs / allowed.length : 0,
  };
}
