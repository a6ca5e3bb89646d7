/**
 * evals/local-model.jsonl against the real local model (SmolLM2-135M under llama-server,
 * sampling as users run it), as a user runs it: `harness eval … --model smollm2 --trials 3` with
 * the endpoint in OPENAI_BASE_URL and the workers' DATABASE_URL, nothing else set. The test asserts the path — the mode auto
 * chose, tool calls made through the text protocol, reports written, pass@k computed — not the
 * model's quality; the figures are printed for the README.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvalReport } from '../../deterministic/eval';
import { passAtK } from '../../deterministic/eval';
import { loadTrace } from '../../history/trace';
import { startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, ROOT, runCli, tempDir } from '../support/cli';
import { LOCAL_MODEL, startLocalModel, type LocalModel } from '../support/local-model';
import { figure } from '../support/figures';

let h: TestHarness;
let model: LocalModel;
beforeAll(async () => {
  [h, model] = await Promise.all([startHarness(), startLocalModel({ parallel: 2 })]);
  h.declarations.add({ modelEndpoints: [model.url] });
}, 180_000);
afterAll(async () => {
  await h?.stop();
  await model?.close();
  removeTempDirs();
});

const TRIALS = 3;

describe('evals/local-model.jsonl against SmolLM2', () => {
  it('runs every case three times through the text protocol and reports pass rate and pass@3', async () => {
    // The workers' database: the CLI reads each trial's report from the store the eval keeps them in.
    const env = cliEnv({ DATABASE_URL: TEST_DATABASE_URL, TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: h.home, OPENAI_BASE_URL: model.url });
    const out = path.join(tempDir('harness-local-eval-'), 'local-model.json');
    // --report-only: a small model fails some trials; this test measures the rates, it is no gate.
    const args = ['eval', path.join(ROOT, 'evals', 'local-model.jsonl'), '--model', LOCAL_MODEL, '--trials', String(TRIALS), '--concurrency', '2', '--report-only'];
    const started = Date.now();
    const r = await runCli([...args, '--config', path.join(ROOT, 'evals', 'local-model.config.json'), '--json', '--out', out, '--no-cache'], { env, timeoutMs: 1_500_000 });
    const wallMs = Date.now() - started;
    const report = parseJson<EvalReport>(r);
    expect(r.code, `${describeResult(r)}\n${model.log()}`).toBe(0);
    for (const ext of ['json', 'md', 'html']) expect(existsSync(out.replace(/json$/, ext)), ext).toBe(true);
    expect(JSON.parse(readFileSync(out, 'utf8')).eval_id).toBe(report.eval_id);

    const trials = report.cases.flatMap((c) => c.runs);
    expect(report.cases.map((c) => c.trials)).toEqual(report.cases.map(() => TRIALS));
    // No trial's workflow failed: whatever the model did, each turn ran to an end of its own.
    expect(trials.filter((t) => t.failure?.reason === 'HARNESS_ERROR' || t.terminated_by === 'failed'), JSON.stringify(trials.map((t) => t.failure))).toEqual([]);
    // pass@k as the report computes it, per case and overall.
    for (const c of report.cases) expect(c.pass_at_k).toBeCloseTo(passAtK(c.trials, c.passes, TRIALS).pass_at_k, 9);
    expect(report.totals.pass_rate).toBeCloseTo(report.totals.passed_trials / report.totals.trials, 9);

    // auto chose text mode for every trial, and the model's calls came through it.
    const traces = await Promise.all(trials.map(async (t) => (await loadTrace(h.client, t.workflow_id)).spans.map((b) => b.span)));
    const modes = traces.map((spans) => spans.find((s) => s.type === 'turn')?.output.tool_mode as string);
    expect(modes.every((m) => m.startsWith('text (')), modes.join('\n')).toBe(true);
    const textCalls = traces.flatMap((spans) => spans.filter((s) => s.type === 'llm_call' && s.output.tool_mode === 'text')).reduce((n, s) => n + (s.output.tool_calls as unknown[]).length, 0);
    expect(textCalls).toBeGreaterThan(0);

    const seconds = trials.map((t) => t.elapsed_ms / 1000).sort((a, b) => a - b);
    const median = seconds[Math.floor(seconds.length / 2)]!;
    // A pass is the case's checks holding, which for some cases needs no answer: say how trials ended.
    const answered = trials.filter((t) => t.terminated_by === 'final_answer' || t.terminated_by === 'finish').length;
    const ends = [...new Set(trials.map((t) => t.terminated_by))].map((e) => `${e} ${trials.filter((t) => t.terminated_by === e).length}`).join(', ');
    figure('local-model-eval', 
      [
        `local-model eval: ${report.totals.passed_trials}/${report.totals.trials} trials passed (pass rate ${report.totals.pass_rate.toFixed(2)}), pass@${TRIALS} ${report.totals.pass_at_k.toFixed(2)}`,
        `per case: ${report.cases.map((c) => `${c.id} ${c.passes}/${c.trials} (pass@${TRIALS} ${c.pass_at_k.toFixed(2)})`).join(', ')}`,
        `answered: ${answered} of ${trials.length} trials (${ends}); passed and answered: ${trials.filter((t) => t.passed && (t.terminated_by === 'final_answer' || t.terminated_by === 'finish')).length}`,
        `median ${median.toFixed(1)} s per trial (slowest ${seconds.at(-1)!.toFixed(1)} s), wall ${(wallMs / 1000).toFixed(0)} s, ${report.totals.usage.total_tokens} tokens (${Math.round(report.totals.usage.total_tokens / trials.length)} per trial), ${textCalls} calls through the text protocol`,
        `auto chose: ${modes[0]}`,
      ].join('\n'),
    );
  }, 1_600_000);
});
