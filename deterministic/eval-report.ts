/** The totals of an eval report, from its cases (pure: the eval workflow computes them). */
import { passAtK, type CaseHead, type CaseReport, type EvalTotals, type TrialReport } from './eval';
import { addUsage, NO_USAGE } from './usage';
import { NANO } from './pricing';

export function summarize(cases: CaseReport[]): EvalTotals {
  const runs = cases.flatMap((c) => c.runs);
  const count = (xs: (string | undefined)[]) => {
    const out: Record<string, number> = {};
    for (const x of xs) if (x) out[x] = (out[x] ?? 0) + 1;
    return out;
  };
  const toolCalls = runs.reduce((n, r) => n + r.tool_calls, 0);
  const toolErrors = runs.reduce((n, r) => n + r.tool_errors, 0);
  const withErrors = runs.filter((r) => r.tool_errors > 0);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const passed = runs.filter((r) => r.passed).length;
  return {
    cases: cases.length,
    trials: runs.length,
    passed_trials: passed,
    pass_rate: runs.length ? passed / runs.length : 0,
    // Cases an eval's budget left unrun have no verdict: they count in no mean.
    pass_at_k: mean(cases.filter((c) => c.trials > 0).map((c) => c.pass_at_k)),
    pass_hat_k: mean(cases.filter((c) => c.trials > 0).map((c) => c.pass_hat_k)),
    failure_reasons: count(runs.map((r) => r.failure?.reason)),
    failure_layers: count(runs.map((r) => r.failure?.layer)),
    avg_steps: mean(runs.map((r) => r.steps)),
    tool_error_rate: toolCalls ? toolErrors / toolCalls : 0,
    recovery_rate: withErrors.length ? withErrors.filter((r) => r.recovered).length / withErrors.length : 0,
    compressions: runs.reduce((n, r) => n + r.compressions, 0),
    usage: runs.reduce((u, r) => addUsage(u, r.usage), NO_USAGE),
    slowest_trial_ms: runs.reduce((n, r) => Math.max(n, r.elapsed_ms), 0),
    ...costTotals(runs),
  };
}

/** What the trials cost in all and per trial; money only when every trial's model is priced. */
function costTotals(runs: readonly TrialReport[]): Pick<EvalTotals, 'cost'> {
  const costed = runs.filter((r) => r.cost);
  if (!costed.length) return {};
  // Summed in nano-dollars, so the total is the ledger's to the last digit.
  const nanos = (v: number | null | undefined) => (v === null || v === undefined ? undefined : Math.round(v * NANO));
  const priced = costed.every((r) => r.cost!.usd !== null);
  const tokens = costed.reduce((n, r) => n + r.cost!.total_tokens, 0);
  const money = priced ? costed.reduce((n, r) => n + nanos(r.cost!.usd)!, 0) : undefined;
  const waste = priced ? costed.reduce((n, r) => n + (nanos(r.cost!.retry_waste_usd) ?? 0), 0) : undefined;
  return {
    cost: {
      total_tokens: tokens,
      usd: money === undefined ? null : money / NANO,
      tokens_per_trial: tokens / costed.length,
      usd_per_trial: money === undefined ? null : money / NANO / costed.length,
      retry_waste_usd: waste === undefined ? null : waste / NANO,
    },
  };
}

/** A case over its trials: passed when every trial passed; pass@k and pass^k with k = the trials run. */
export function caseReport(c: CaseHead, runs: TrialReport[]): CaseReport {
  const sorted = [...runs].sort((a, b) => a.trial - b.trial);
  const passes = sorted.filter((r) => r.passed).length;
  const n = sorted.length;
  return {
    id: c.id,
    line: c.line,
    ...(c.expect ? { expect: c.expect } : {}),
    ...(c.expect_reason ? { expect_reason: c.expect_reason } : {}),
    trials: n,
    passes,
    passed: n > 0 && passes === n,
    // k = the trials run: pass@k is "any passed", pass^k "all passed".
    ...passAtK(n, passes, n),
    runs: sorted,
  };
}
