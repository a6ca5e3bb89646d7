/** An eval report as Markdown (the summary printed and written beside the JSON). */
import type { EvalReport } from '../../common/eval';

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

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
    const verdict = `${c.passed ? 'pass' : 'FAIL'}${c.runs.length && c.runs.every((x) => x.cached) ? ' (cached)' : ''}`;
    const expected = c.expect && (c.expect === 'pass') !== c.passed ? ` (expected ${c.expect})` : '';
    out.push(`| ${c.id} | ${verdict}${expected} | ${c.passes}/${c.trials} | ${first?.failure?.reason ?? ''} | ${first?.steps ?? ''} | \`harness trace ${first?.workflow_id ?? ''}\` |`);
  }
  const slow = r.cases.flatMap((c) => c.runs).sort((a, b) => b.elapsed_ms - a.elapsed_ms).slice(0, 5);
  if (slow.length) {
    out.push('', '## Slowest trials', '');
    for (const s of slow) out.push(`- ${s.case_id} #${s.trial}: ${(s.elapsed_ms / 1000).toFixed(2)} s, ${s.steps} steps`);
  }
  return `${out.join('\n')}\n`;
}
