/**
 * An eval's trial reports in the store, on real Postgres, the embedded PGlite and in memory: a
 * report written twice is one row (the first stays), an eval's reports come back by case and
 * trial and never another eval's, an answer with the NUL character survives, and purging a
 * trial's session removes its report only. Several reports go in one write, each kept once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../activities/memory/migrate';
import { InMemoryEvalTrials, type EvalTrials } from '../../../activities/store/eval-trials';
import { PgMessageStore } from '../../../activities/store/pg-message-store';
import type { TrialReport } from '../../../deterministic/eval';
import { embeddedPostgres, realPostgres, type Backend } from '../memory/backends';

const backends: Backend[] = [];
afterAll(async () => {
  for (const b of backends) await b.teardown();
});

async function inDatabase(open: () => Promise<Backend>): Promise<EvalTrials> {
  const b = await open();
  backends.push(b);
  const pool = b.pool();
  await migrate(pool);
  return new PgMessageStore(pool).evalTrials();
}

function report(evalId: string, caseId: string, trial: number, answer = `answer ${caseId}`): TrialReport {
  const session = `${evalId}-${caseId}-t${trial}`;
  return {
    case_id: caseId,
    trial,
    passed: true,
    checks: [{ type: 'contains', passed: true, detail: 'found' }],
    terminated_by: 'final_answer',
    answer,
    steps: 1,
    tool_calls: 0,
    tool_errors: 0,
    recovered: false,
    compressions: 0,
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    rate_limited: 0,
    elapsed_ms: 5,
    session_id: session,
    workflow_id: `${session}/turn-1`,
  } as TrialReport;
}

describe.each([
  ['real Postgres', () => inDatabase(realPostgres)],
  ['embedded PGlite', () => inDatabase(embeddedPostgres)],
  ['memory', async () => new InMemoryEvalTrials()],
])('eval trial reports in %s', (_name, open) => {
  it('keep one row a trial, list an eval by case and trial, and go with their session', async () => {
    const trials = await open();
    await trials.put('ev-1', report('ev-1', 'b', 2));
    await trials.put('ev-1', report('ev-1', 'b', 1, 'a\u0000b'));
    await trials.put('ev-1', report('ev-1', 'a', 1));
    await trials.put('ev-1', report('ev-1', 'a', 1, 'written again'));
    await trials.put('ev-2', report('ev-2', 'a', 1));
    const listed = await trials.list('ev-1');
    expect(listed.map((r) => `${r.case_id}/${r.trial}`)).toEqual(['a/1', 'b/1', 'b/2']);
    expect(listed.map((r) => r.answer)).toEqual(['answer a', 'a\u0000b', 'answer b']);
    expect(listed[0]).toEqual(report('ev-1', 'a', 1));
    expect(await trials.purge('ev-1-b-t1')).toBe(1);
    expect((await trials.list('ev-1')).map((r) => `${r.case_id}/${r.trial}`)).toEqual(['a/1', 'b/2']);
    expect(await trials.list('ev-2')).toHaveLength(1);
  });

  it('keep several reports in one write, each once: one already there, or twice in the batch, stays as first written', async () => {
    const trials = await open();
    await trials.put('ev-3', report('ev-3', 'b', 1));
    await trials.putMany('ev-3', [report('ev-3', 'a', 1), report('ev-3', 'a', 1, 'twice'), report('ev-3', 'b', 1, 'written again'), report('ev-3', 'c', 1, 'x\u0000y'), report('ev-3', 'c', 2)]);
    await trials.putMany('ev-3', []);
    const listed = await trials.list('ev-3');
    expect(listed.map((r) => `${r.case_id}/${r.trial}`)).toEqual(['a/1', 'b/1', 'c/1', 'c/2']);
    expect(listed.map((r) => r.answer)).toEqual(['answer a', 'answer b', 'x\u0000y', 'answer c']);
  });
});
