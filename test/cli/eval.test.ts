/**
 * `harness eval` as a user runs it: a bad suite line is one error naming the line; `--no-wait`
 * then `eval status` re-attaches and gets the report (each trial one workflow: its turn, the
 * eval's child); a failed case fails the run (exit 1, the failed check named) unless
 * `--report-only`; `--compare` flags a case that flipped from
 * pass to fail and exits 1; a case that starts from a recorded run asks the model nothing for
 * the steps before its start (counted on the scripted server).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvalReport } from '../../deterministic/eval';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import { DEFAULT_POLICY, endpointConfig, newSessionId, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir } from '../support/cli';

let h: TestHarness;
let server: ScriptedModelServer;
let env: NodeJS.ProcessEnv;
let dir: string;
const cli = (args: string[], extra: Record<string, string> = {}) => runCli(['eval', ...args], { env: { ...env, ...extra }, timeoutMs: 180_000 });
const suiteFile = (name: string, cases: unknown[]) => {
  const file = path.join(dir, name);
  writeFileSync(file, cases.map((c) => JSON.stringify(c)).join('\n'));
  return file;
};
const hello = (answer: string) => ({ id: 'hello', input: 'Say hello.', model_script: { steps: [{ content: answer }] }, checks: [{ type: 'contains', value: 'hello' }] });
const time = { id: 'time', input: 'What time is it?', model_script: { steps: [{ tool_calls: [{ name: 'get_current_time', arguments: {} }] }, { content: 'It is now.' }] }, checks: [{ type: 'tool_called', name: 'get_current_time' }] };

beforeAll(async () => {
  h = await startHarness();
  // Sessions without a script of their own (the eval's trials against the endpoint) get this one.
  server = await startScriptedModel({ script: { steps: [{ expect: { messages_contain: 'look around' }, content: 'Went on from step 3. HARNESS_OK' }] } });
  // The workers' store, where the CLI reads each trial's report back.
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: h.home, DATABASE_URL: TEST_DATABASE_URL });
  dir = tempDir('harness-cli-eval-');
}, 60_000);
afterAll(async () => {
  await server?.close();
  await h?.stop();
  removeTempDirs();
});

describe('harness eval', () => {
  it('rejects a bad suite line with its number and field, before starting anything', async () => {
    const file = suiteFile('bad.jsonl', [hello('hello'), { id: 'broken', input: 'x', checks: [{ type: 'regex', value: '(' }] }]);
    const r = await cli([file]);
    expect(r.code).toBe(2);
    expect(r.errLines[0]).toBe(`error: ${file}:2: checks.0.value: is not a valid RE2 regular expression (no lookaround or backreferences)`);
    expect(r.errLines[1]).toMatch(/^hint: /);
    expect(stackLines(r.stderr)).toEqual([]);
  }, 60_000);

  it('--no-wait prints the id; eval status re-attaches; --compare exits 1 on a case that flipped', async () => {
    const good = suiteFile('good.jsonl', [hello('hello there'), time]);
    const started = await cli([good, '--no-wait', '--json']);
    expect(started.code, describeResult(started)).toBe(0);
    const { eval_id } = parseJson<{ eval_id: string }>(started);
    const base = path.join(dir, 'base.json');
    const attached = await cli(['status', eval_id, '--json', '--out', base]);
    expect(attached.code, describeResult(attached)).toBe(0);
    const report = parseJson<EvalReport>(attached);
    expect(report).toMatchObject({ eval_id, totals: { cases: 2, trials: 2, passed_trials: 2, pass_rate: 1 } });
    expect(report.cases.map((c) => c.runs[0]!.workflow_id)).toEqual([`${eval_id}-hello-t1/turn-1`, `${eval_id}-time-t1/turn-1`]);
    // The eval ran each trial itself: its turn is the eval's child, and the trial has no workflow of its own.
    for (const run of report.cases.map((c) => c.runs[0]!)) {
      expect((await h.client.workflow.getHandle(run.workflow_id).describe()).parentExecution?.workflowId).toBe(eval_id);
      await expect(h.client.workflow.getHandle(run.session_id).describe()).rejects.toThrow(/not found/i);
      expect(run.elapsed_ms).toBeGreaterThan(0);
    }

    // The same suite with a worse answer: the hello case flips.
    const worse = suiteFile('worse.jsonl', [hello('bye'), time]);
    const r = await cli([worse, '--compare', base, '--out', path.join(dir, 'worse.json')]);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.errLines).toContain('REGRESSION hello: passed in the base, fails now');
    expect(r.errLines).toContain('pass_rate: 1 → 0.500 (-0.500)');
    expect(r.stdout).toContain('| hello | FAIL | 0/1 | FINAL_ANSWER_INCOMPLETE |');
  }, 180_000);

  it('exits 1 when a case fails (a CI gate), naming the case and its failed check; --report-only reports the same without failing', async () => {
    // The notes are written, but not as the check wants: a failed file_contains, which no other reason explains.
    const notes = {
      id: 'write_notes',
      input: 'Write the notes.',
      approvals: 'approve',
      model_script: { steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'draft\n' } }] }, { content: 'Notes written.' }] },
      checks: [{ type: 'file_contains', path: 'notes.txt', value: 'done' }],
    };
    const file = suiteFile('gate.jsonl', [hello('hello'), notes]);
    const row = '| write_notes | FAIL | 0/1 | CHECK_FAILED (file_contains) |';
    const gated = await cli([file, '--out', path.join(dir, 'gate.json')]);
    expect(gated.code, describeResult(gated)).toBe(1);
    expect(gated.errLines).toContain('failed: write_notes (0 of 1 trial(s) passed: CHECK_FAILED (file_contains))');
    expect(gated.errLines).toContain('1 case(s) failed: exit 1 (--report-only reports them without failing the run)');
    expect(gated.stdout).toContain(row);
    expect(gated.stdout).toContain('| hello | pass | 1/1 |');
    expect(gated.stdout).toContain('- write_notes #1: file_contains notes.txt: notes.txt does not contain "done": draft');

    const reported = await cli([file, '--report-only', '--json', '--out', path.join(dir, 'report-only.json')]);
    expect(reported.code, describeResult(reported)).toBe(0);
    expect(reported.errLines.filter((l) => l.startsWith('failed:'))).toEqual([]);
    const report = parseJson<EvalReport>(reported);
    expect(report.cases.find((c) => c.id === 'write_notes')!.runs[0]!.failure).toMatchObject({ reason: 'CHECK_FAILED', detail: expect.stringContaining('file_contains: notes.txt does not contain "done"') });
  }, 180_000);

  it('runs trials: pass@k and pass^k in the report', async () => {
    const file = suiteFile('trials.jsonl', [{ ...hello('hello'), trials: 3 }]);
    const r = await cli([file, '--json', '--out', path.join(dir, 'trials.json')]);
    expect(r.code, describeResult(r)).toBe(0);
    const report = parseJson<EvalReport>(r);
    expect(report.cases[0]).toMatchObject({ trials: 3, passes: 3, pass_at_k: 1, pass_hat_k: 1 });
    expect(report.totals).toMatchObject({ trials: 3, pass_rate: 1 });
  }, 180_000);

  it('a case from a recorded run makes no model call before its start step', async () => {
    const source = newSessionId('eval-src');
    server.registerScript(source, {
      steps: [
        { tool_calls: [{ name: 'get_current_time', arguments: {} }] },
        { tool_calls: [{ name: 'list_files', arguments: {} }] },
        { content: 'second step done, recorded answer' },
      ],
    });
    const recorded = await h.finish(source, endpointConfig(server.url, {}, DEFAULT_POLICY), 'look around');
    expect(recorded.steps).toBe(3);
    const before = server.requests.length;
    const file = suiteFile('from.jsonl', [{ id: 'from_step_3', from: { turn: recorded.turnId, step: 3 }, checks: [{ type: 'contains', value: 'Went on from step 3' }] }]);
    h.declarations.add({ modelEndpoints: [server.url] });
    const r = await cli([file, '--model', 'test-model', '--json', '--out', path.join(dir, 'from.json')], { OPENAI_BASE_URL: server.url });
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson<EvalReport>(r).cases[0]).toMatchObject({ passed: true });
    // One model call, for step 3 (index 0 of the trial); none for steps 1 and 2.
    const trial = server.requests.slice(before);
    expect(trial.map((q) => q.index)).toEqual([0]);
    expect(trial[0]!.session).not.toBe(source);
  }, 180_000);

  it('does not pay again for an unchanged case with a real model; --no-cache and a changed case run again', async () => {
    const model = await startScriptedModel({ script: { steps: [{ content: 'hello from the endpoint' }] } });
    try {
      const file = suiteFile('cached.jsonl', [hello('unused')]);
      h.declarations.add({ modelEndpoints: [model.url] });
      const run = (extra: string[] = []) => cli([file, '--model', 'test-model', '--json', '--out', path.join(dir, `cached-${Math.random()}.json`), ...extra], { OPENAI_BASE_URL: model.url });
      const first = await run();
      expect(first.code, describeResult(first)).toBe(0);
      expect(model.requests).toHaveLength(1);
      const second = await run();
      expect(second.code, describeResult(second)).toBe(0);
      expect(model.requests).toHaveLength(1);
      expect(second.errLines[0]).toBe('1 unchanged case(s) taken from the eval cache (--no-cache runs them again)');
      expect(parseJson<EvalReport>(second)).toMatchObject({ cached_cases: 1, totals: { passed_trials: 1 }, cases: [{ id: 'hello', runs: [{ cached: true }] }] });
      expect((await run(['--no-cache'])).code).toBe(0);
      expect(model.requests).toHaveLength(2);
      // A changed check is a changed case: it runs.
      suiteFile('cached.jsonl', [{ ...hello('unused'), checks: [{ type: 'contains', value: 'endpoint' }] }]);
      expect((await run()).code).toBe(0);
      expect(model.requests).toHaveLength(3);
    } finally {
      await model.close();
    }
  }, 180_000);

  it('halves its concurrency when trials are rate limited (429), and still passes them', async () => {
    const limited = (i: number) => ({ id: `limited-${i}`, input: 'Say hello.', model_script: { steps: [{ fault: { status: 429, times: 1 }, content: `hello ${i}` }] }, checks: [{ type: 'contains', value: 'hello' }] });
    const file = suiteFile('limited.jsonl', [0, 1, 2, 3].map(limited));
    const r = await cli([file, '--concurrency', '4', '--json', '--out', path.join(dir, 'limited.json')]);
    expect(r.code, describeResult(r)).toBe(0);
    const report = parseJson<EvalReport>(r);
    expect(report.totals.passed_trials).toBe(4);
    expect(report.cases.every((c) => c.runs[0]!.rate_limited >= 1)).toBe(true);
    expect(report.concurrency.lowered).toBeGreaterThanOrEqual(1);
    expect(report.concurrency.final).toBeLessThan(4);
  }, 180_000);
});
