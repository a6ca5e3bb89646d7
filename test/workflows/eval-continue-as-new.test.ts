/**
 * An eval of many small trials (the scripted model) that continues as new every few trials: each
 * run's history stays bounded by the trials it ran, the eval's result carries its totals and
 * cases without the runs (the trial reports are in the store, counted in `stored_runs`), and the
 * report read back from the store is complete: every trial once, with its checks. What the
 * trials spent goes on from run to run, so a budget spent in a later run stops the eval there.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { EvalReport } from '../../deterministic/eval';
import { followEval, startEval } from '../../evals/runner/run';
import { readStoredRuns } from '../../evals/runner/stored-runs';
import { parseSuite } from '../../evals/runner/suite';
import { workflowRuns } from '../../history/workflow-runs';
import { newSessionId, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { scriptedEvalConfig } from '../support/eval-scaffold';

const CASES = 12;
const TRIALS = 3; // 36 trials
const PER_RUN = 8;

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

const config = scriptedEvalConfig('Eval.');

it('continues as new with a bounded history, returns totals and a reference, and every report is in the store', async () => {
  // Case 0 fails its check on purpose: the failures are counted and read back too.
  const lines = Array.from({ length: CASES }, (_, i) =>
    JSON.stringify({ id: `c${i}`, input: `Say ${i}.`, model_script: { steps: [{ content: `answer ${i}` }] }, checks: [{ type: 'contains', value: i === 0 ? 'never' : `answer ${i}` }] }),
  );
  const suite = parseSuite(lines.join('\n'), 'many.jsonl');
  const evalId = newSessionId('eval-can');
  await startEval(h.client, h.taskQueue, suite, { concurrency: 4, trials: TRIALS, config, model: 'scripted', scriptedPerCase: true, trialsPerRun: PER_RUN }, evalId);
  const seen: number[] = [];
  const summary = await followEval(h.client, evalId, (p) => seen.push(p.done));

  // The result: totals over all 36 trials, each case's counts, no runs; the runs are in the store.
  expect(summary.stored_runs).toBe(CASES * TRIALS);
  expect(summary.totals).toMatchObject({ cases: CASES, trials: CASES * TRIALS, passed_trials: (CASES - 1) * TRIALS });
  expect(summary.cases.every((c) => c.runs.length === 0 && c.trials === TRIALS)).toBe(true);
  expect(summary.cases[0]).toMatchObject({ id: 'c0', passes: 0, passed: false });
  // Progress counted on across the runs.
  expect(Math.max(...seen)).toBeLessThanOrEqual(CASES * TRIALS);

  // Read back as `harness eval` reads them (the workers' store: here their DATABASE_URL): every
  // trial once, with its checks, as an eval that kept its runs reported them.
  const full: EvalReport = await readStoredRuns(summary, h.home, { DATABASE_URL: TEST_DATABASE_URL });
  const runs = full.cases.flatMap((c) => c.runs);
  expect(runs).toHaveLength(CASES * TRIALS);
  expect(new Set(runs.map((r) => `${r.case_id}/${r.trial}`)).size).toBe(CASES * TRIALS);
  expect(full.cases[1]!.runs.map((r) => r.trial)).toEqual([1, 2, 3]);
  expect(full.cases[0]!.runs[0]).toMatchObject({ passed: false, checks: [{ passed: false }] });
  expect(full.cases[1]!.runs[0]).toMatchObject({ passed: true, answer: 'answer 1' });

  // The eval's runs: one per PER_RUN trials, each history bounded by the trials it ran.
  const evalRuns = await workflowRuns(h.client, evalId);
  expect(evalRuns).toHaveLength(Math.ceil((CASES * TRIALS) / PER_RUN));
  const sizes = evalRuns.map((r) => r.history.events?.length ?? 0);
  // About nine events a trial (child start and close, local activity markers, workflow tasks), and a few of the run's own: all 36 in one run would be some 300.
  for (const n of sizes) expect(n).toBeLessThan(PER_RUN * 12 + 20);
}, 300_000);

it('carries what the trials spent from run to run: a budget spent in a later run stops the eval there', async () => {
  const lines = Array.from({ length: 8 }, (_, i) => JSON.stringify({ id: `b${i}`, input: `Say ${i}.`, model_script: { steps: [{ content: `answer ${i}` }] }, checks: [{ type: 'contains', value: `answer ${i}` }] }));
  // What one such trial costs, from an eval of one.
  const probe = newSessionId('eval-can-probe');
  await startEval(h.client, h.taskQueue, parseSuite(lines[0]!, 'probe.jsonl'), { concurrency: 1, trials: 1, config, model: 'scripted', scriptedPerCase: true }, probe);
  const perTrial = (await followEval(h.client, probe, () => undefined)).totals.cost?.total_tokens ?? 0;
  expect(perTrial).toBeGreaterThan(0);
  const suite = parseSuite(lines.join('\n'), 'budget.jsonl');
  const evalId = newSessionId('eval-can-budget');
  // One trial at a time, two a run: four and a half trials' worth is spent after the fifth, in the third run.
  const budget = Math.ceil(perTrial * 4.5);
  await startEval(h.client, h.taskQueue, suite, { concurrency: 1, trials: 1, config, model: 'scripted', scriptedPerCase: true, trialsPerRun: 2, budget: { tokens: budget } }, evalId);
  const summary = await followEval(h.client, evalId, () => undefined);
  expect(summary.totals.trials).toBe(5);
  expect(summary.budget).toMatchObject({ limit: { tokens: budget }, stopped: true, not_run: [{ case_id: 'b5', trial: 1 }, { case_id: 'b6', trial: 1 }, { case_id: 'b7', trial: 1 }] });
  expect(summary.budget!.spent.total_tokens).toBeGreaterThanOrEqual(budget);
  expect(await workflowRuns(h.client, evalId)).toHaveLength(3);
}, 300_000);
