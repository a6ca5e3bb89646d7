/**
 * Following an eval asks its workflow for progress; each ask is a query that costs the worker, the
 * server and the follower CPU, so while the answer stays the same the follower asks less often
 * (twice the wait each time, up to eight times the interval), and after a change it asks again
 * after twice the interval, not at once: with many trials running the answer changes at nearly
 * every ask. Between asks the last answer is passed on, so a terminal's clock still moves.
 */
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvalProgress } from '../../deterministic/eval';
import { followEval, ProgressPace, startEval } from '../../evals/runner/run';
import { parseSuite } from '../../evals/runner/suite';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { scriptedEvalConfig } from '../support/eval-scaffold';

const progress = (done: number, running: number): EvalProgress => ({ eval_id: 'e', total: 4, done, passed: done, failed: 0, running, concurrency: 2, started_at: '' });

describe('the pace of progress queries', () => {
  it('waits twice the interval after a change, doubles it while nothing changes, up to eight times the interval', () => {
    const pace = new ProgressPace(100);
    const waits = [progress(0, 2), progress(0, 2), progress(0, 2), progress(0, 2), progress(0, 2), progress(0, 2), progress(1, 2), progress(1, 2), progress(2, 1)].map((p) => {
      pace.looked(p);
      return pace.nextWaitMs;
    });
    expect(waits).toEqual([200, 400, 800, 800, 800, 800, 200, 400, 200]);
  });
});

describe('following an eval whose trial waits on its model', () => {
  let h: TestHarness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h?.stop());

  it('asks fewer times than the interval would, and passes the last progress on in between', async () => {
    let queries = 0;
    const counting: WorkflowClientInterceptor = {
      async query(input, next) {
        queries++;
        return next(input);
      },
    };
    const client = new Client({ connection: h.client.connection, namespace: h.client.options.namespace, interceptors: { workflow: [counting] } });
    const suite = parseSuite(JSON.stringify({ id: 'slow', input: 'Say it.', model_script: { steps: [{ fault: { delay_ms: 4000 }, content: 'it' }] }, checks: [{ type: 'contains', value: 'it' }] }), 'slow.jsonl');
    const evalId = newSessionId('eval-pace');
    await startEval(client, h.taskQueue, suite, { concurrency: 1, trials: 1, config: scriptedEvalConfig('Pace.'), model: 'scripted', scriptedPerCase: true }, evalId);
    const seen: EvalProgress[] = [];
    const report = await followEval(client, evalId, (p) => seen.push(p), 100);
    expect(report.totals.passed_trials).toBe(1);
    // At one ask each 100 ms the model's 4 s alone took 40; backing off to 800 ms, about 7. A
    // slower machine only stretches the waits, so this bound holds under load too.
    expect(queries).toBeGreaterThan(1);
    expect(queries).toBeLessThan(16);
    // The printer heard more often than the workflow was asked: the last answer, passed on.
    expect(seen.length).toBeGreaterThan(queries);
    expect(seen.every((p) => p.eval_id === evalId)).toBe(true);
  });
});
