/**
 * The eval's report at the 2,000-trial maximum, built from the store: the workflow's result (the
 * totals and cases without runs) stays far below Temporal's 2 MB payload limit where the runs
 * themselves pass it, and the runs read back make the whole report, every trial once.
 */
import { expect, it } from 'vitest';
import { createEvalKeepActivities, withStoredRuns } from '../../activities/eval-keep';
import { InMemoryMessageStore } from '../../activities/store/message-store';
import type { CaseHead, TrialReport } from '../../deterministic/eval';

const CASES = 200;
const TRIALS = 10;

function report(caseId: string, trial: number): TrialReport {
  const session = `ev-big-${caseId}-t${trial}`;
  return {
    case_id: caseId,
    trial,
    passed: trial % 2 === 0,
    checks: [{ type: 'contains', passed: trial % 2 === 0, detail: 'x'.repeat(200) }],
    terminated_by: 'final_answer',
    // A real answer is often this long: the runs of 2,000 trials are megabytes.
    answer: 'y'.repeat(1_000),
    steps: 2,
    tool_calls: 1,
    tool_errors: 0,
    recovered: false,
    compressions: 0,
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    rate_limited: 0,
    elapsed_ms: trial,
    session_id: session,
    workflow_id: `${session}/turn-1`,
  } as TrialReport;
}

it('returns a bounded result for 2,000 trials and reads every run back', async () => {
  const store = new InMemoryMessageStore();
  const activities = createEvalKeepActivities({ messages: async () => store, check: async () => report('unused', 1) });
  const heads: CaseHead[] = Array.from({ length: CASES }, (_, i) => ({ id: `case-${i}`, line: i + 1 }));
  for (const h of heads) for (let t = 1; t <= TRIALS; t++) await activities.keepEvalTrial({ evalId: 'ev-big', report: report(h.id, t) });

  const built = await activities.finishEvalReport({ evalId: 'ev-big', cases: heads, notRun: [] });
  expect(built.stored_runs).toBe(CASES * TRIALS);
  expect(built.totals).toMatchObject({ cases: CASES, trials: CASES * TRIALS, passed_trials: (CASES * TRIALS) / 2 });
  const resultBytes = Buffer.byteLength(JSON.stringify(built));
  expect(resultBytes).toBeLessThan(256 * 1024);

  const summary = { eval_id: 'ev-big', suite: 's', model: 'scripted', started_at: '', concurrency: { max: 1, final: 1, lowered: 0 }, ...built };
  const full = await withStoredRuns(summary, store.evalTrials());
  expect(full.cases.flatMap((c) => c.runs)).toHaveLength(CASES * TRIALS);
  expect(full.cases[7]!.runs.map((r) => r.trial)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  // What the result would have been with its runs: past the payload limit.
  expect(Buffer.byteLength(JSON.stringify(full))).toBeGreaterThan(2 * 1024 * 1024);
});
