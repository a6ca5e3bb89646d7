/**
 * workers/drain.ts on its own: the activity interceptor's count of what runs, and the lines a
 * drain prints (finished, grace run out, cut short by the force time), with a stand-in worker
 * whose state and run() the test drives. The real drain: test/durability/drain.test.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { GracefulShutdownPeriodExpiredError, type Worker } from '@temporalio/worker';
import type { Context } from '@temporalio/activity';
import { describe, expect, it } from 'vitest';
import { InFlightActivities, runDraining } from '../../workers/drain';

/** A stand-in for the SDK worker: its state, and a run() the test ends. */
function fakeWorker() {
  let state = 'RUNNING';
  let end!: (err?: Error) => void;
  const running = new Promise<void>((resolve, reject) => (end = (err) => (err ? reject(err) : resolve())));
  return {
    worker: { getState: () => state } as unknown as Worker,
    running,
    shutdown: () => (state = 'DRAINING'),
    end,
  };
}

/** Starts an activity through the interceptor; returns a function that ends it. */
function startActivity(inFlight: InFlightActivities, activityType: string, args: unknown[]): () => void {
  let finish!: () => void;
  const ctx = { info: { activityType, isLocal: false, workflowExecution: { workflowId: 's-1/turn-1', runId: 'r' } } } as unknown as Context;
  void inFlight.interceptor(ctx).inbound!.execute!({ args, headers: {} }, () => new Promise<unknown>((resolve) => (finish = () => resolve(undefined))));
  return () => finish();
}

describe('runDraining', () => {
  it('counts what runs and says when the drain is over with everything finished', async () => {
    const inFlight = new InFlightActivities();
    const w = fakeWorker();
    const lines: string[] = [];
    const stop = startActivity(inFlight, 'executeTool', [{ name: 'run_shell', callId: 't1-s1-c0' }]);
    await sleep(0);
    expect(inFlight.list()).toEqual(['run_shell (s-1/turn-1, call t1-s1-c0)']);
    const done = runDraining(w.worker, w.running, { inFlight, graceMs: 5_000, taskQueue: 'q', log: (l) => lines.push(l) });
    w.shutdown();
    await sleep(150);
    expect(lines).toEqual(['worker draining: stopped polling task queue q; waiting up to 5 s for 1 activity in flight to finish: run_shell (s-1/turn-1, call t1-s1-c0)']);
    stop();
    await sleep(0);
    expect(inFlight.list()).toEqual([]);
    w.end();
    await done;
    expect(lines[1]).toMatch(/^worker drained in \d+\.\d s: 1 activity finished, none cut short; sandbox containers are kept for the next worker$/);
  });

  it('says which calls the grace ran out on (the SDK cancels them)', async () => {
    const inFlight = new InFlightActivities();
    const w = fakeWorker();
    const lines: string[] = [];
    const stop = startActivity(inFlight, 'callModel', [{}]);
    const done = runDraining(w.worker, w.running, { inFlight, graceMs: 200, taskQueue: 'q', log: (l) => lines.push(l) });
    w.shutdown();
    await sleep(400);
    stop(); // it honoured the cancellation
    w.end();
    await done;
    expect(lines[1]).toMatch(/^worker drained in \d+\.\d s: the 0.2 s grace ran out and 1 activity still running was cancelled, to be retried by another worker \(callModel \(s-1\/turn-1\)\); sandbox containers are kept/);
  });

  it('a drain cut short by the force time resolves, naming what was left running; any other failure is thrown', async () => {
    const inFlight = new InFlightActivities();
    const w = fakeWorker();
    const lines: string[] = [];
    startActivity(inFlight, 'executeTool', [{ name: 'run_shell', callId: 't1-s2-c0' }]);
    const done = runDraining(w.worker, w.running, { inFlight, graceMs: 100, taskQueue: 'q', log: (l) => lines.push(l) });
    w.shutdown();
    await sleep(150);
    w.end(new GracefulShutdownPeriodExpiredError('Timed out while waiting for worker to shutdown gracefully'));
    await done;
    expect(lines[1]).toMatch(
      /^worker stopped \d+\.\d s into its drain: 1 activity did not end when cancelled after the 0.1 s grace \(run_shell \(s-1\/turn-1, call t1-s2-c0\)\); Temporal retries it on another worker once its heartbeats stop/,
    );

    const failing = fakeWorker();
    const failed = runDraining(failing.worker, failing.running, { inFlight: new InFlightActivities(), graceMs: 100, taskQueue: 'q', log: () => undefined });
    failing.end(new Error('core crashed'));
    await expect(failed).rejects.toThrow('core crashed');
  });

  it('a drain over before it was seen still gets both lines', async () => {
    const w = fakeWorker();
    const lines: string[] = [];
    const done = runDraining(w.worker, w.running, { inFlight: new InFlightActivities(), graceMs: 30_000, taskQueue: 'q', log: (l) => lines.push(l) });
    w.end();
    await done;
    expect(lines).toEqual(['worker draining: stopped polling task queue q; no activity in flight', expect.stringMatching(/^worker drained in 0\.\d s: 0 activities finished/)]);
  });

  it('a sandbox host: the main Worker through its drain before the first look, the host queue\'s activity still running, is waited for and named', async () => {
    const inFlight = new InFlightActivities();
    const w = fakeWorker();
    const lines: string[] = [];
    const stop = startActivity(inFlight, 'executeTool', [{ name: 'run_shell', callId: 't1-s1-c0' }]);
    const done = runDraining(w.worker, w.running, { inFlight, graceMs: 30_000, taskQueue: 'q (and sandbox host queue q@host-a)', log: (l) => lines.push(l) });
    // The main Worker had nothing in flight: it was stopped at once; run() waits for the host's.
    (w.worker as unknown as { getState: () => string }).getState = () => 'STOPPED';
    await sleep(300);
    expect(lines).toEqual(['worker draining: stopped polling task queue q (and sandbox host queue q@host-a); waiting up to 30 s for 1 activity in flight to finish: run_shell (s-1/turn-1, call t1-s1-c0)']);
    stop();
    await sleep(0);
    w.end();
    await done;
    expect(lines[1]).toMatch(/^worker drained in \d+\.\d s: 1 activity finished, none cut short/);
  });
});
