/**
 * `harness eval --compare base.json`: per-case flips and metric deltas; a pass that became a
 * failure is a regression. Figures are per trial (pass rate, pass@k, tokens and cost per trial),
 * so runs with different trial counts compare; cases an eval's budget left unrun are set apart.
 */
import { readFileSync } from 'node:fs';
import type { EvalReport } from '../../deterministic/eval';
import { JsonSyntaxError, parseJsonText } from '../../deterministic/json-text';
import { UsageError } from '../../machine/errors';

export interface Comparison {
  regressions: string[];
  fixed: string[];
  added: string[];
  removed: string[];
  /** Cases the current run's budget left unrun (no verdict to compare). */
  notRun: string[];
  /** Trials run in the base and now (the figures are per trial). */
  trials: { base: number; now: number };
  deltas: { metric: string; base: number; now: number }[];
}

export function loadReport(file: string): EvalReport {
  let value: unknown;
  try {
    value = parseJsonText(readFileSync(file, 'utf8'));
  } catch (err) {
    // Never V8's JSON message: it quotes the file, which may be any file.
    const why = err instanceof JsonSyntaxError ? err.message : ((err as NodeJS.ErrnoException).code ?? 'unreadable');
    throw new UsageError(`cannot read the base report ${file}: ${why}`, '--compare takes a report written by `harness eval --out`');
  }
  const r = value as Partial<EvalReport>;
  if (!r || !Array.isArray(r.cases) || !r.totals) throw new UsageError(`${file} is not an eval report`, '--compare takes a report written by `harness eval --out`');
  return r as EvalReport;
}

export function compareReports(base: EvalReport, now: EvalReport): Comparison {
  const before = new Map(base.cases.map((c) => [c.id, c]));
  const after = new Map(now.cases.map((c) => [c.id, c]));
  const out: Comparison = { regressions: [], fixed: [], added: [], removed: [], notRun: [], trials: { base: base.totals.trials, now: now.totals.trials }, deltas: [] };
  for (const [id, c] of after) {
    const b = before.get(id);
    if (c.trials === 0) out.notRun.push(id);
    else if (!b) out.added.push(id);
    else if (b.passed && !c.passed) out.regressions.push(id);
    else if (!b.passed && c.passed) out.fixed.push(id);
  }
  for (const id of before.keys()) if (!after.has(id)) out.removed.push(id);
  const metrics: [string, (r: EvalReport) => number][] = [
    ['pass_rate', (r) => r.totals.pass_rate],
    ['pass_at_k', (r) => r.totals.pass_at_k],
    ['pass_hat_k', (r) => r.totals.pass_hat_k],
    ['avg_steps', (r) => r.totals.avg_steps],
    ['tool_error_rate', (r) => r.totals.tool_error_rate],
    ['recovery_rate', (r) => r.totals.recovery_rate],
    ['tokens_per_trial', (r) => r.totals.cost?.tokens_per_trial ?? (r.totals.trials ? r.totals.usage.total_tokens / r.totals.trials : 0)],
  ];
  for (const [metric, f] of metrics) out.deltas.push({ metric, base: f(base), now: f(now) });
  // Money only when both runs priced their trials (a report from before costs has none).
  const b = base.totals.cost?.usd_per_trial;
  const n = now.totals.cost?.usd_per_trial;
  if (typeof b === 'number' && typeof n === 'number') out.deltas.push({ metric: 'usd_per_trial', base: b, now: n });
  return out;
}

export function comparisonLines(c: Comparison): string[] {
  const lines: string[] = [];
  for (const id of c.regressions) lines.push(`REGRESSION ${id}: passed in the base, fails now`);
  for (const id of c.fixed) lines.push(`fixed ${id}: failed in the base, passes now`);
  if (c.added.length) lines.push(`new cases: ${c.added.join(', ')}`);
  if (c.removed.length) lines.push(`cases no longer in the suite: ${c.removed.join(', ')}`);
  if (c.notRun.length) lines.push(`not run (the budget ran out), not compared: ${c.notRun.join(', ')}`);
  if (c.trials.base !== c.trials.now) lines.push(`trials: ${c.trials.base} in the base, ${c.trials.now} now (figures are per trial)`);
  for (const d of c.deltas) {
    if (d.base === d.now) continue;
    const sign = d.now > d.base ? '+' : '';
    lines.push(`${d.metric}: ${fmt(d.base)} → ${fmt(d.now)} (${sign}${fmt(d.now - d.base)})`);
  }
  if (!lines.length) lines.push('no change against the base');
  return lines;
}

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : Math.abs(x) < 0.01 ? x.toPrecision(3) : x.toFixed(3));
