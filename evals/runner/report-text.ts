/** An eval report as Markdown (the summary printed and written beside the JSON). */
import type { CaseReport, EvalBudgetReport, EvalCheck, EvalReport, TrialReport } from '../../deterministic/eval';
import { NANO, usdText } from '../../deterministic/pricing';

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
/** USD as the ledger prints it, or `no price`. */
export const money = (v: number | null | undefined): string => (typeof v === 'number' ? usdText(Math.round(v * NANO)) : 'no price');

/** A case's verdict in words: a failure the case was designed for is not a real one. */
export function verdictText(c: CaseReport): string {
  if (c.trials === 0) return 'not run (budget)';
  if (c.passed) return 'pass';
  return c.expect === 'fail' ? `fail, as designed${c.expect_reason ? ` (${c.expect_reason})` : ''}` : 'FAIL';
}

/** What an eval's budget stopped, in one line. */
export function budgetStopLine(b: EvalBudgetReport): string {
  const limit = b.limit.usd !== undefined ? money(b.limit.usd) : `${b.limit.tokens} tokens`;
  const spent = b.limit.usd !== undefined ? money(b.spent.usd) : `${b.spent.total_tokens} tokens`;
  const which = b.not_run.slice(0, 10).map((t) => `${t.case_id}#${t.trial}`).join(', ');
  return `budget ${limit} reached (${spent} spent): ${b.not_run.length} trial(s) not started${which ? `: ${which}${b.not_run.length > 10 ? ', …' : ''}` : ''}`;
}

export function reportMarkdown(r: EvalReport): string {
  const t = r.totals;
  const out: string[] = [];
  out.push(`# Eval ${r.eval_id}`, '');
  out.push(`Suite \`${r.suite}\` · model \`${r.model}\` · ${t.cases} cases, ${t.trials} trials · started ${r.started_at}${r.wall_ms !== undefined ? ` · ${(r.wall_ms / 1000).toFixed(1)} s` : ''} ${r.cached_cases ? ` · ${r.cached_cases} cached` : ''} · concurrency ${r.concurrency.max}${r.concurrency.lowered ? ` (lowered ${r.concurrency.lowered}× on 429s, ended at ${r.concurrency.final})` : ''}`, '');
  out.push('| metric | value |', '|---|---|');
  out.push(`| pass rate (trials) | ${pct(t.pass_rate)} (${t.passed_trials}/${t.trials}) |`);
  out.push(`| pass@k / pass^k | ${pct(t.pass_at_k)} / ${pct(t.pass_hat_k)} |`);
  out.push(`| average steps | ${t.avg_steps.toFixed(1)} |`);
  out.push(`| tool error rate | ${pct(t.tool_error_rate)} |`);
  out.push(`| recovery rate | ${pct(t.recovery_rate)} |`);
  out.push(`| compressions | ${t.compressions} |`);
  out.push(`| tokens | ${t.usage.total_tokens} (prompt ${t.usage.prompt_tokens}, completion ${t.usage.completion_tokens}) |`);
  if (t.cost) {
    out.push(`| cost | ${money(t.cost.usd)} (${money(t.cost.usd_per_trial)} a trial${t.cost.retry_waste_usd ? `, ${money(t.cost.retry_waste_usd)} on failed attempts` : ''}) |`);
    out.push(`| tokens per trial | ${Math.round(t.cost.tokens_per_trial)} |`);
  }
  if (r.budget) out.push(`| budget | ${r.budget.stopped ? budgetStopLine(r.budget) : `${r.budget.limit.usd !== undefined ? money(r.budget.limit.usd) : `${r.budget.limit.tokens} tokens`}, not reached`} |`);
  out.push('');
  const reasons = Object.entries(t.failure_reasons).sort((a, b) => b[1] - a[1]);
  if (reasons.length) {
    out.push('## Failure reasons', '', '| reason | trials |', '|---|---|');
    for (const [k, v] of reasons) out.push(`| ${k} | ${v} |`);
    out.push('');
  }
  out.push('## Cases', '', '| case | verdict | passes | reason | steps | trace |', '|---|---|---|---|---|---|');
  for (const c of r.cases) {
    const first = c.runs.find((x) => !x.passed) ?? c.runs[0];
    const verdict = `${verdictText(c)}${c.runs.length && c.runs.every((x) => x.cached) ? ' (cached)' : ''}`;
    const expected = c.trials > 0 && c.expect && (c.expect === 'pass') !== c.passed ? ` (expected ${c.expect})` : '';
    out.push(`| ${c.id} | ${verdict}${expected} | ${c.passes}/${c.trials} | ${first ? reasonText(first) : ''} | ${first?.steps ?? ''} | \`harness trace ${first?.workflow_id ?? ''}\` |`);
  }
  const failedChecks = failedCheckLines(r.cases);
  if (failedChecks.length) out.push('', '## Failed checks', '', ...failedChecks);
  const slow = r.cases.flatMap((c) => c.runs).sort((a, b) => b.elapsed_ms - a.elapsed_ms).slice(0, 5);
  if (slow.length) {
    out.push('', '## Slowest trials', '');
    for (const s of slow) out.push(`- ${s.case_id} #${s.trial}: ${(s.elapsed_ms / 1000).toFixed(2)} s, ${s.steps} steps`);
  }
  return `${out.join('\n')}\n`;
}

/** A trial's failure reason, naming the checks that failed when the reason is only that a check failed. */
export function reasonText(t: TrialReport): string {
  const reason = t.failure?.reason ?? '';
  if (reason !== 'CHECK_FAILED' && reason !== 'UNKNOWN') return reason;
  const names = [...new Set(t.checks.filter((k) => !k.passed).map((k) => k.check.type))];
  return names.length ? `${reason} (${names.join(', ')})` : reason;
}

// Trials whose failed checks the summary lists (the JSON and HTML reports have every trial).
const FAILED_TRIALS_LISTED = 20;

/** Each failed check of the failed trials: the check, what it looked at, and what was found. */
function failedCheckLines(cases: readonly CaseReport[]): string[] {
  const failed = cases.flatMap((c) => c.runs.filter((t) => !t.passed && t.checks.some((k) => !k.passed)));
  const lines = failed.slice(0, FAILED_TRIALS_LISTED).flatMap((t) =>
    t.checks.filter((k) => !k.passed).map((k) => `- ${t.case_id} #${t.trial}: ${checkName(k.check)}: ${flat(k.detail ?? 'failed')}`),
  );
  const more = failed.length - FAILED_TRIALS_LISTED;
  return more > 0 ? [...lines, `- … and ${more} more failed trial(s): the JSON and HTML reports list them all`] : lines;
}

/** A check as a suite names it: its type and what it looks for. */
function checkName(check: EvalCheck): string {
  const parts = [check.type, 'name' in check ? check.name : undefined, 'path' in check ? check.path : undefined];
  return parts.filter((p): p is string => typeof p === 'string' && p !== '').join(' ');
}

/** One line (a detail may quote a multi-line answer). */
function flat(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
