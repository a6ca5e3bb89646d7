/** Suite files, checks, failure attribution, pass@k and report rendering: the pure parts of evals. */
import { describe, expect, it } from 'vitest';
import { passAtK, type EvalReport } from '../../deterministic/eval';
import { attribute, runCheck, type TrialFacts } from '../../deterministic/eval-checks';
import { compareReports } from '../../evals/runner/compare';
import { reportHtml } from '../../evals/runner/report-html';
import { parseSuite } from '../../evals/runner/suite';
import { UsageError } from '../../machine/errors';

const ok = JSON.stringify({ id: 'a', input: 'hi', model_script: { steps: [{ content: 'hello' }] }, checks: [{ type: 'contains', value: 'hello' }] });

describe('suite files', () => {
  it('reject a bad line naming its line number and field', () => {
    const bad = JSON.stringify({ id: 'b', input: 'x', checks: [{ type: 'contains' }] });
    expect(() => parseSuite(`${ok}\n\n${bad}\n`, 'evals/x.jsonl')).toThrow(/^evals\/x\.jsonl:3: checks\.0\.value: /);
    expect(() => parseSuite(`${ok}\n{not json`, 's.jsonl')).toThrow(/^s\.jsonl:2: invalid JSON/);
    expect(() => parseSuite(JSON.stringify({ id: 'r', input: 'x', checks: [{ type: 'regex', value: '(?=x)' }] }), 's.jsonl')).toThrow(/^s\.jsonl:1: checks\.0\.value: is not a valid RE2/);
    expect(() => parseSuite(JSON.stringify({ id: 'c', input: 'x', checks: [{ type: 'sparkles' }] }), 's.jsonl')).toThrow(/^s\.jsonl:1: checks\.0(\.type)?: expected a check/);
    expect(() => parseSuite(JSON.stringify({ id: 'd', input: 'x', fixtures: { '../etc/passwd': 'x' } }), 's.jsonl')).toThrow(/^s\.jsonl:1: fixtures.*inside the workspace/);
    expect(() => parseSuite(JSON.stringify({ id: 'e', input: 'x', surprise: 1 }), 's.jsonl')).toThrow(/^s\.jsonl:1: .*surprise/);
    expect(() => parseSuite(`${ok}\n${ok}`, 's.jsonl')).toThrow(/^s\.jsonl:2: id: "a" is already the id of line 1$/);
    expect(() => parseSuite('// only a comment\n', 's.jsonl')).toThrow(/holds no cases/);
    try {
      parseSuite('{', 's.jsonl');
    } catch (err) {
      expect(err).toBeInstanceOf(UsageError);
    }
  });

  it('accept the seed shorthands and fill in defaults (approvals deny, no wait on people)', () => {
    const line = JSON.stringify({ id: 'seed', prompt: 'Read README2.md', expected_contains: 'README', expected_error_types: ['FILE_NOT_FOUND'] });
    const [c] = parseSuite(line, 's.jsonl').cases;
    expect(c).toMatchObject({
      id: 'seed',
      input: 'Read README2.md',
      approvals: 'deny',
      answers: [],
      fixtures: {},
      line: 1,
      checks: [{ type: 'contains', value: 'README' }, { type: 'error_type_seen', value: 'FILE_NOT_FOUND' }],
    });
  });
});

describe('pass@k and pass^k', () => {
  it('are right on a known mix', () => {
    // 5 trials, 2 passed: pass@1 = 2/5; pass@2 = 1 − C(3,2)/C(5,2) = 1 − 3/10; pass^2 = C(2,2)/C(5,2) = 1/10.
    expect(passAtK(5, 2, 1).pass_at_k).toBeCloseTo(0.4);
    expect(passAtK(5, 2, 2).pass_at_k).toBeCloseTo(0.7);
    expect(passAtK(5, 2, 2).pass_hat_k).toBeCloseTo(0.1);
    // k = n: any passed / all passed.
    expect(passAtK(3, 1, 3)).toEqual({ pass_at_k: 1, pass_hat_k: 0 });
    expect(passAtK(3, 3, 3)).toEqual({ pass_at_k: 1, pass_hat_k: 1 });
    expect(passAtK(3, 0, 3)).toEqual({ pass_at_k: 0, pass_hat_k: 0 });
  });
});

describe('checks and attribution', () => {
  const facts = (over: Partial<TrialFacts> = {}): TrialFacts => ({
    result: { answer: 'The README says hi', terminated_by: 'final_answer', steps: 3 },
    calls: [
      { step: 1, callId: 'c1', name: 'read_file', args: {}, ok: false, error_type: 'FILE_NOT_FOUND' },
      { step: 2, callId: 'c2', name: 'read_file', args: {}, ok: true },
    ],
    files: { 'out.txt': 'done' },
    ...over,
  });
  it('judge each check type', () => {
    const f = facts();
    const passed = (check: Parameters<typeof runCheck>[0]) => runCheck(check, f).passed;
    expect(passed({ type: 'contains', value: 'readme' })).toBe(true);
    expect(passed({ type: 'not_contains', value: 'secret' })).toBe(true);
    expect(passed({ type: 'regex', value: '^The' })).toBe(true);
    // RE2: a pattern that backtracks exponentially in JavaScript answers at once here.
    const evil = runCheck({ type: 'regex', value: '^(a+)+$' }, { ...f, result: { ...f.result, answer: `${'a'.repeat(5000)}!` } });
    expect(evil.passed).toBe(false);
    expect(passed({ type: 'terminated_by', value: 'finish' })).toBe(false);
    expect(passed({ type: 'tool_called', name: 'read_file' })).toBe(true);
    expect(passed({ type: 'tool_not_called', name: 'read_file' })).toBe(false);
    expect(passed({ type: 'error_type_seen', value: 'FILE_NOT_FOUND' })).toBe(true);
    expect(passed({ type: 'error_type_not_seen', value: 'FILE_NOT_FOUND' })).toBe(false);
    expect(passed({ type: 'approval_requested' })).toBe(false);
    expect(passed({ type: 'file_exists', path: 'out.txt' })).toBe(true);
    expect(passed({ type: 'file_contains', path: 'out.txt', value: 'done' })).toBe(true);
    expect(passed({ type: 'file_exists', path: 'nope.txt' })).toBe(false);
    expect(passed({ type: 'max_steps', value: 2 })).toBe(false);
    expect(passed({ type: 'compressed' })).toBe(false);
  });
  it('attribute a failure to its reason and layer; a recovered error is not the reason', () => {
    const missing = runCheck({ type: 'contains', value: 'Paris' }, facts());
    expect(attribute(facts(), [missing])).toMatchObject({ reason: 'FINAL_ANSWER_INCOMPLETE', layer: 'model' });
    const unrecovered = facts({ calls: [{ step: 1, callId: 'c1', name: 'read_file', args: {}, ok: false, error_type: 'FILE_NOT_FOUND' }] });
    expect(attribute(unrecovered, [missing])).toMatchObject({ reason: 'FILE_NOT_FOUND_UNRECOVERED', layer: 'model' });
    expect(attribute(facts({ result: { answer: '', terminated_by: 'failed', steps: 1, error: 'HTTP 503' } }), [])).toMatchObject({ reason: 'MODEL_UNAVAILABLE', layer: 'environment' });
    expect(attribute(facts({ result: { answer: '', terminated_by: 'final_answer', steps: 4, compressions: [{ step: 3, before_tokens: 9, after_tokens: 1, summarized_messages: 2, compacted_tool_results: 0 }] } }), [missing])).toMatchObject({ reason: 'CONTEXT_LOSS', layer: 'harness' });
  });
});

describe('reports', () => {
  const report = (passed: Record<string, boolean>): EvalReport => ({
    eval_id: 'eval-x',
    suite: 's.jsonl',
    model: 'scripted',
    started_at: '2026-11-30T00:00:00.000Z',
    concurrency: { max: 4, final: 4, lowered: 0 },
    totals: { cases: 2, trials: 2, passed_trials: 0, pass_rate: Object.values(passed).filter(Boolean).length / 2, pass_at_k: 0, pass_hat_k: 0, failure_reasons: {}, failure_layers: {}, avg_steps: 1, tool_error_rate: 0, recovery_rate: 0, compressions: 0, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, slowest_trial_ms: 0 },
    cases: Object.entries(passed).map(([id, p], i) => ({ id, line: i + 1, trials: 1, passes: p ? 1 : 0, passed: p, pass_at_k: p ? 1 : 0, pass_hat_k: p ? 1 : 0, runs: [] })),
  });
  it('--compare finds the flipped case', () => {
    const c = compareReports(report({ a: true, b: false }), report({ a: false, b: true }));
    expect(c.regressions).toEqual(['a']);
    expect(c.fixed).toEqual(['b']);
  });
  it('the HTML page escapes what the model and the suite wrote and loads nothing', () => {
    const r = report({ '<img src=x onerror=alert(1)>': true });
    const html = reportHtml(r);
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).not.toMatch(/<script|https?:\/\//);
  });
});
