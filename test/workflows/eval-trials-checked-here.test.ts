/**
 * An eval judges a trial whose checks need nothing but its turn's result in its own workflow
 * (patch `eval-trials-checked-here`): no checks activity for it, and its report is written with
 * others' a batch at a time (keepEvalTrials), before the eval's report is built. A trial whose
 * checks read a workspace file still runs the checks activity. Every report is in the store once,
 * as the checks activity would have written it: passed or failed with its reason, its cost.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EvalReport } from '../../deterministic/eval';
import { followEval, startEval } from '../../evals/runner/run';
import { readStoredRuns } from '../../evals/runner/stored-runs';
import { parseSuite } from '../../evals/runner/suite';
import { newSessionId, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { localActivities, scriptedEvalConfig } from '../support/eval-scaffold';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

const config = scriptedEvalConfig('Eval judged here.');

it('judges trials by their results in the workflow and keeps their reports a batch at a time', async () => {
  // 18 trials judged by their answers (the first fails its check on purpose), one by a file.
  const lines = [
    ...Array.from({ length: 18 }, (_, i) =>
      JSON.stringify({ id: `c${i}`, input: `Say ${i}.`, model_script: { steps: [{ content: `answer ${i}` }] }, checks: [{ type: 'contains', value: i === 0 ? 'never' : `answer ${i}` }] }),
    ),
    JSON.stringify({
      id: 'file',
      input: 'Write it.',
      approvals: 'approve',
      model_script: { steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'done' } }] }, { content: 'Wrote it.' }] },
      checks: [{ type: 'file_contains', path: 'out.txt', value: 'done' }],
    }),
  ];
  const evalId = newSessionId('eval-here');
  await startEval(h.client, h.taskQueue, parseSuite(lines.join('\n'), 'here.jsonl'), { concurrency: 4, trials: 1, config, model: 'scripted', scriptedPerCase: true }, evalId);
  const summary = await followEval(h.client, evalId, () => undefined);
  expect(summary.stored_runs).toBe(19);
  expect(summary.totals).toMatchObject({ trials: 19, passed_trials: 18 });

  // One checks activity (the file's trial); the other 18 reports in two writes (16, then the rest).
  const local = await localActivities(h.client, evalId);
  expect(local.filter((t) => t === 'checkAndKeepEvalTrial')).toHaveLength(1);
  expect(local.filter((t) => t === 'keepEvalTrials')).toHaveLength(2);

  const full: EvalReport = await readStoredRuns(summary, h.home, { DATABASE_URL: TEST_DATABASE_URL });
  const runs = full.cases.flatMap((c) => c.runs);
  expect(new Set(runs.map((r) => r.case_id)).size).toBe(19);
  const failed = runs.find((r) => r.case_id === 'c0')!;
  expect(failed).toMatchObject({ passed: false, checks: [{ passed: false }], failure: { layer: expect.any(String) }, steps: 1, tool_calls: 0 });
  const passed = runs.find((r) => r.case_id === 'c5')!;
  expect(passed).toMatchObject({ passed: true, answer: 'answer 5', rate_limited: 0, cost: { total_tokens: passed.usage.total_tokens, retry_waste_tokens: 0 } });
  expect(passed.elapsed_ms).toBeGreaterThanOrEqual(0);
  expect(runs.find((r) => r.case_id === 'file')).toMatchObject({ passed: true, tool_calls: 1 });
}, 180_000);
