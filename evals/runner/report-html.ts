/**
 * An eval report as one self-contained HTML page (no scripts, no external resources): totals,
 * the failure-reason distribution as bars, every case with its checks, the slowest trials, and
 * the command that traces each trial. All text from the report is escaped: answers come from a
 * model and case ids from a suite file.
 */
import type { CaseReport, EvalReport } from '../../deterministic/eval';
import type { Comparison } from './compare';
import { budgetStopLine, money, verdictText } from './report-text';

const esc = (s: unknown) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The page; with `cmp` (`--compare`), the comparison with the base report too. */
export function reportHtml(r: EvalReport, cmp?: Comparison): string {
  const t = r.totals;
  const reasons = Object.entries(t.failure_reasons).sort((a, b) => b[1] - a[1]);
  const most = Math.max(1, ...reasons.map(([, v]) => v));
  const metric = (k: string, v: string) => `<div class="m"><div class="v">${esc(v)}</div><div class="k">${esc(k)}</div></div>`;
  const cases = r.cases
    .map((c) => {
      const runs = c.runs
        .map((x) => {
          const checks = x.checks.map((k) => `<li class="${k.passed ? 'ok' : 'bad'}">${esc(k.check.type)} ${esc(JSON.stringify({ ...k.check, type: undefined }))}${k.detail ? ` — ${esc(k.detail)}` : ''}</li>`).join('');
          const cost = x.cost ? ` · ${esc(money(x.cost.usd))} · ${x.cost.total_tokens} tokens` : '';
          return `<details><summary>trial ${x.trial}: ${x.passed ? 'pass' : `fail · ${esc(x.failure?.reason ?? '')} (${esc(x.failure?.layer ?? '')})`} · ${x.steps} steps · ${(x.elapsed_ms / 1000).toFixed(2)} s${cost}</summary>
<p><code>harness trace ${esc(x.workflow_id)}</code></p><ul>${checks}</ul><pre>${esc(x.answer)}</pre></details>`;
        })
        .join('');
      const unexpected = c.trials > 0 && c.expect && (c.expect === 'pass') !== c.passed ? ` <span class="bad">(expected ${esc(c.expect)})</span>` : '';
      const notRun = c.not_run ? ` <span class="muted">(${c.not_run} not run)</span>` : '';
      return `<tr class="${rowClass(c)}"><td>${esc(c.id)}</td><td class="${verdictClass(c)}">${esc(verdictText(c))}${unexpected}${notRun}</td><td>${c.passes}/${c.trials}</td><td>${runs}</td></tr>`;
    })
    .join('\n');
  const slow = r.cases
    .flatMap((c) => c.runs)
    .sort((a, b) => b.elapsed_ms - a.elapsed_ms)
    .slice(0, 5)
    .map((s) => `<li>${esc(s.case_id)} #${s.trial}: ${(s.elapsed_ms / 1000).toFixed(2)} s, ${s.steps} steps</li>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Eval ${esc(r.eval_id)}</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}h1{font-size:1.4em}
.ms{display:flex;flex-wrap:wrap;gap:1em}.m{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;min-width:8em}
.v{font-size:1.4em;font-weight:600}.k{color:#666}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #eee;padding:.3em .5em;vertical-align:top;text-align:left}
.ok{color:#166534}.bad{color:#b91c1c}.designed{color:#1d4ed8}.muted{color:#888}tr.designed td{background:#eff6ff}tr.notrun td{color:#888}.bar{background:#fca5a5;height:1em;display:inline-block}pre{white-space:pre-wrap;background:#f6f6f6;padding:.5em}
</style></head><body>
<h1>Eval ${esc(r.eval_id)}</h1>
<p>Suite <code>${esc(r.suite)}</code> · model <code>${esc(r.model)}</code> · started ${esc(r.started_at)}${r.wall_ms !== undefined ? ` · ${(r.wall_ms / 1000).toFixed(1)} s` : ''} · concurrency ${r.concurrency.max} (ended at ${r.concurrency.final})</p>
<div class="ms">${metric('pass rate', `${pct(t.pass_rate)} (${t.passed_trials}/${t.trials})`)}${metric('pass@k', pct(t.pass_at_k))}${metric('pass^k', pct(t.pass_hat_k))}${metric('average steps', t.avg_steps.toFixed(1))}${metric('tool error rate', pct(t.tool_error_rate))}${metric('recovery rate', pct(t.recovery_rate))}${metric('compressions', String(t.compressions))}${metric('tokens', String(t.usage.total_tokens))}${t.cost ? `${metric('cost', money(t.cost.usd))}${metric('cost per trial', money(t.cost.usd_per_trial))}${metric('tokens per trial', String(Math.round(t.cost.tokens_per_trial)))}` : ''}</div>
${r.budget ? `<p class="${r.budget.stopped ? 'bad' : ''}">${esc(r.budget.stopped ? budgetStopLine(r.budget) : 'budget not reached')}</p>` : ''}
${cmp ? comparisonHtml(cmp) : ''}
<h2>Failure reasons</h2>
${reasons.length ? `<table>${reasons.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${v}</td><td><span class="bar" style="width:${Math.round((v / most) * 300)}px"></span></td></tr>`).join('')}</table>` : '<p>none</p>'}
<h2>Cases</h2>
<table><tr><th>case</th><th>verdict</th><th>passes</th><th>trials</th></tr>
${cases}
</table>
<h2>Slowest trials</h2><ul>${slow}</ul>
</body></html>
`;
}

/** A designed failure is marked apart from a real one; a case the budget left unrun is greyed. */
function verdictClass(c: CaseReport): string {
  if (c.trials === 0) return 'muted';
  return c.passed ? 'ok' : c.expect === 'fail' ? 'designed' : 'bad';
}

function rowClass(c: CaseReport): string {
  return c.trials === 0 ? 'notrun' : !c.passed && c.expect === 'fail' ? 'designed' : '';
}

/** `--compare`: per-trial figures of the base and now, and the cases that flipped. */
function comparisonHtml(c: Comparison): string {
  const num = (x: number) => (Number.isInteger(x) ? String(x) : Math.abs(x) < 0.01 ? x.toPrecision(3) : x.toFixed(3));
  const rows = c.deltas
    .map((d) => {
      const change = d.now - d.base;
      return `<tr><td>${esc(d.metric)}</td><td>${num(d.base)}</td><td>${num(d.now)}</td><td>${change === 0 ? '' : `${change > 0 ? '+' : ''}${num(change)}`}</td></tr>`;
    })
    .join('');
  const list = (label: string, ids: string[], cls = '') => (ids.length ? `<p class="${cls}">${esc(label)}: ${ids.map(esc).join(', ')}</p>` : '');
  return `<h2>Compared with the base</h2>
<p>${c.trials.base} trial(s) in the base, ${c.trials.now} now: the figures are per trial.</p>
<table><tr><th>metric</th><th>base</th><th>now</th><th>change</th></tr>${rows}</table>
${list('regressions (passed in the base, fail now)', c.regressions, 'bad')}${list('fixed', c.fixed, 'ok')}${list('new cases', c.added)}${list('no longer in the suite', c.removed)}${list('not run (budget), not compared', c.notRun, 'muted')}`;
}
