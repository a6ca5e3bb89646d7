/**
 * An eval with its cache: cases whose every trial is in the cache are not run again (their
 * reports come from the cache, marked `cached`), the rest run as usual; the report is then the
 * union, its totals computed again, and the new trials are stored.
 */
import type { CaseReport, EvalCase, EvalReport } from '../../deterministic/eval';
import { caseReport, summarize } from '../../deterministic/eval-report';
import type { EvalCache } from './cache';
import type { EvalOptions } from './run';
import type { Suite } from './suite';

interface CacheUse {
  cache: EvalCache;
  version: string;
}

/** Splits the suite: cases to run, and those whose every trial the cache holds. */
export function splitCached(suite: Suite, o: EvalOptions, use: CacheUse): { run: EvalCase[]; cached: CaseReport[] } {
  const run: EvalCase[] = [];
  const cached: CaseReport[] = [];
  for (const c of suite.cases) {
    const trials = Array.from({ length: c.trials ?? o.trials }, (_, i) => i + 1);
    const hits = trials.map((trial) => use.cache.get(use.cache.key({ case: c, trial, model: o.model, config: o.config, version: use.version })));
    if (hits.every((h) => h !== undefined)) cached.push(caseReport(c, hits.map((h) => ({ ...h!, cached: true }))));
    else run.push(c);
  }
  return { run, cached };
}

/** The report with the cached cases in suite order and totals over all of them. */
export function mergeCached(report: EvalReport, cached: CaseReport[], suite: Suite): EvalReport {
  if (!cached.length) return report;
  const byId = new Map([...report.cases, ...cached].map((c) => [c.id, c]));
  const cases = suite.cases.flatMap((c) => (byId.has(c.id) ? [byId.get(c.id)!] : []));
  return { ...report, cases, totals: summarize(cases), cached_cases: cached.length };
}

/** Stores the trials that ran (not those that came from the cache, nor harness failures). */
export function storeTrials(report: EvalReport, suite: Suite, o: EvalOptions, use: CacheUse): void {
  const cases = new Map(suite.cases.map((c) => [c.id, c]));
  for (const c of report.cases) {
    const def = cases.get(c.id);
    if (!def) continue;
    for (const t of c.runs) {
      if (t.cached || t.failure?.reason === 'HARNESS_ERROR') continue;
      use.cache.put(use.cache.key({ case: def, trial: t.trial, model: o.model, config: o.config, version: use.version }), t);
    }
  }
}
