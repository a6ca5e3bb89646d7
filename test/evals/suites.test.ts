/**
 * The shipped suites run as users run them (`harness eval evals/<suite>.jsonl`, the scripted
 * model answering each case from its model_script, the default policy) through real workflows;
 * every case gets the verdict it was designed for, designed-to-fail ones included.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvalReport } from '../../deterministic/eval';
import { loadSuite } from '../../evals/runner/suite';
import { startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, ROOT, runCli, tempDir } from '../support/cli';

let h: TestHarness;
let env: NodeJS.ProcessEnv;
const suites = readdirSync(path.join(ROOT, 'evals')).filter((f) => f.endsWith('.jsonl')).sort();

beforeAll(async () => {
  h = await startHarness();
  // The workers' store, where the CLI reads each trial's report back (the runs a failure names).
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: h.home, DATABASE_URL: TEST_DATABASE_URL });
}, 60_000);
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('shipped eval suites', () => {
  it('hold at least 40 cases together, some designed to fail', () => {
    const cases = suites.flatMap((s) => loadSuite(path.join(ROOT, 'evals', s)).cases);
    expect(cases.length).toBeGreaterThanOrEqual(40);
    expect(cases.filter((c) => c.expect === 'fail').length).toBeGreaterThanOrEqual(5);
  });

  it.each(suites)('%s: every case gets its expected verdict', async (suite) => {
    const out = path.join(tempDir('harness-eval-'), `${suite}.json`);
    // A suite that needs servers or settings ships its config beside it (evals/mcp.config.json).
    const config = path.join(ROOT, 'evals', suite.replace(/\.jsonl$/, '.config.json'));
    const withConfig = existsSync(config) ? ['--config', config] : [];
    // The worker declares what that config declares, as `harness worker --config` would.
    if (existsSync(config)) h.declareConfig(config);
    const r = await runCli(['eval', path.join(ROOT, 'evals', suite), '--json', '--out', out, '--concurrency', '4', ...withConfig], { env, timeoutMs: 600_000 });
    const report = parseJson<EvalReport>(r);
    const verdicts = Object.fromEntries(report.cases.map((c) => [c.id, c.passed ? 'pass' : 'fail']));
    const expected = Object.fromEntries(loadSuite(path.join(ROOT, 'evals', suite)).cases.map((c) => [c.id, c.expect ?? 'pass']));
    const why = report.cases.filter((c) => verdicts[c.id] !== expected[c.id]).map((c) => `${c.id}: ${JSON.stringify(c.runs.map((x) => x.failure ?? x.checks.filter((k) => !k.passed)))}`);
    expect(verdicts, why.join('\n')).toEqual(expected);
    expect(r.code, describeResult(r)).toBe(0);
    // Every failure has a reason; a case designed to fail gets the one it was designed for.
    for (const c of report.cases.filter((x) => !x.passed)) {
      expect(c.runs[0]!.failure?.reason, c.id).toBeDefined();
      if (c.expect_reason) expect(c.runs[0]!.failure?.reason, `${c.id}: ${c.runs[0]!.failure?.detail}`).toBe(c.expect_reason);
    }
  }, 600_000);
});
