/**
 * Costs in evals, as a user runs them: each trial's cost (the ledger of its turn's history) in
 * the report, equal to `harness cost <eval-id>`; `--budget` stops starting trials once those run
 * have spent it and says what did not run; `--compare` gives per-trial figures (pass rate,
 * tokens and cost per trial) across runs of different trial counts, and the HTML report shows
 * the comparison and marks a case designed to fail apart from a real failure.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvalReport } from '../../deterministic/eval';
import { startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, tempDir } from '../support/cli';

let h: TestHarness;
let env: NodeJS.ProcessEnv;
let dir: string;
let config: string;
let suite: string;
const cli = (args: string[]) => runCli(args, { env, cwd: dir, timeoutMs: 180_000 });

// Each answer is ~2,000 characters: ~500 completion tokens a trial.
const talk = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  input: 'Say hello at length.',
  model_script: { steps: [{ content: `hello ${'x'.repeat(2000)}` }] },
  checks: [{ type: 'contains', value: 'hello' }],
  ...extra,
});

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-cli-eval-budget-');
  // The workers' store, where the CLI reads each trial's report back.
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: h.home, DATABASE_URL: TEST_DATABASE_URL });
  config = path.join(dir, 'prices.json');
  writeFileSync(config, JSON.stringify({ prices: { scripted: { input: 2, output: 8 } } }));
  // The last case is designed to fail: its check looks for what the answer never says.
  const cases = [talk('a'), talk('b'), talk('c'), talk('d', { checks: [{ type: 'contains', value: 'goodbye' }], expect: 'fail', expect_reason: 'FINAL_ANSWER_INCOMPLETE' })];
  suite = path.join(dir, 'talk.jsonl');
  writeFileSync(suite, cases.map((c) => JSON.stringify(c)).join('\n'));
}, 60_000);
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('costs in evals', () => {
  let base: string;
  let perTrial = 0;

  it('reports each trial\'s cost, the same as `harness cost <eval-id>`', async () => {
    base = path.join(dir, 'base.json');
    const r = await cli(['eval', suite, '--config', config, '--json', '--out', base]);
    expect(r.code, describeResult(r)).toBe(0);
    const report = parseJson<EvalReport>(r);
    const trials = report.cases.flatMap((c) => c.runs);
    expect(trials).toHaveLength(4);
    for (const t of trials) expect(t.cost!.usd).toBeGreaterThan(0);
    expect(report.totals.cost!.total_tokens).toBe(trials.reduce((n, t) => n + t.cost!.total_tokens, 0));
    const cost = await cli(['cost', report.eval_id, '--json']);
    expect(cost.code, describeResult(cost)).toBe(0);
    const ledger = parseJson<{ kind: string; total: { usd: number; total_tokens: number }; turns: unknown[] }>(cost);
    expect(ledger).toMatchObject({ kind: 'eval', total: { usd: report.totals.cost!.usd, total_tokens: report.totals.cost!.total_tokens } });
    expect(ledger.turns).toHaveLength(4);
    perTrial = Math.max(...trials.map((t) => t.cost!.total_tokens));
  });

  it('--budget stops starting trials once spent, and says what did not run', async () => {
    const out = path.join(dir, 'budget.json');
    // One trial at a time; a budget of one and a half trials is spent after the second.
    const budget = Math.ceil(perTrial * 1.5);
    const r = await cli(['eval', suite, '--config', config, '--budget', String(budget), '--concurrency', '1', '--out', out]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`budget ${budget} tokens reached \\(\\d+ tokens spent\\): 2 trial\\(s\\) not started: c#1, d#1`));
    const report = JSON.parse(readFileSync(out, 'utf8')) as EvalReport;
    expect(report.budget).toMatchObject({ limit: { tokens: budget }, stopped: true, not_run: [{ case_id: 'c', trial: 1 }, { case_id: 'd', trial: 1 }] });
    expect(report.budget!.spent.total_tokens).toBeGreaterThanOrEqual(budget);
    expect(report.cases.map((c) => [c.id, c.trials, c.not_run ?? 0])).toEqual([['a', 1, 0], ['b', 1, 0], ['c', 0, 1], ['d', 0, 1]]);
    expect(report.totals.trials).toBe(2);
    expect(r.stdout).toMatch(/\| c \| not run \(budget\) /);
  });

  it('--compare gives per-trial figures across trial counts; the HTML shows it and marks the designed failure', async () => {
    const out = path.join(dir, 'now.json');
    const r = await cli(['eval', suite, '--config', config, '--trials', '2', '--compare', base, '--out', out]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr).toContain('trials: 4 in the base, 8 now (figures are per trial)');
    // The same cases, the same answers: per trial, nothing changed.
    expect(r.stderr).not.toMatch(/tokens_per_trial|usd_per_trial|REGRESSION/);
    const html = readFileSync(out.replace(/\.json$/, '.html'), 'utf8');
    expect(html).toContain('<h2>Compared with the base</h2>');
    expect(html).toMatch(/<tr><td>usd_per_trial<\/td><td>[\d.e-]+<\/td><td>[\d.e-]+<\/td><td><\/td><\/tr>/);
    expect(html).toMatch(/<tr class="designed"><td>d<\/td><td class="designed">fail, as designed \(FINAL_ANSWER_INCOMPLETE\)/);
    expect(html).toMatch(/<tr class=""><td>a<\/td><td class="ok">pass/);
    const md = readFileSync(out.replace(/\.json$/, '.md'), 'utf8');
    expect(md).toMatch(/\| cost \| \$0\.\d+ \(\$0\.\d+ a trial\) \|/);
  });
});
