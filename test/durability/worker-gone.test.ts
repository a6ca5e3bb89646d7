/**
 * Crash test: the only worker is SIGKILLed while `run` waits on a model
 * call and stays gone for two minutes. `run` says in one line that no worker polls the task
 * queue, keeps waiting, and prints the answer once a new worker is up; a `status` started during
 * the outage answers at once from history (running, and that no worker polls). Before, the
 * server's FAILED_PRECONDITION crashed both after ~20 s.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, inject, it } from 'vitest';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import { TEST_DATABASE_URL } from '../support/harness';
import { kill, spawnWorker } from '../support/processes';
import { cliEnv, removeTempDirs, tempDir } from '../support/cli';
import { modelCallRunning, watchCli, type WatchedCli } from '../support/watched-cli';
import { figure } from '../support/figures';

const OUTAGE_MS = 120_000;
const processes: ChildProcess[] = [];
let model: ScriptedModelServer | undefined;

afterAll(async () => {
  for (const p of processes) await kill(p, 'SIGKILL');
  await model?.close();
  removeTempDirs();
}, 60_000);

it('run waits through a worker gone for 2 minutes, saying no worker polls, and prints the answer after; status answers meanwhile', async () => {
  const dir = tempDir('harness-worker-gone-');
  const taskQueue = `worker-gone-${randomUUID()}`;
  // The model's first request is slow, so the kill lands in it; the replacement worker's retry is
  // answered at once. The model runs here (not as `scripted:<file>` in the worker, which a new
  // worker process would play from the start, slow again), so it counts requests across workers.
  model = await startScriptedModel({ script: { steps: [{ fault: { delay_ms: 20_000 }, content: 'A worker came back. HARNESS_OK' }] } });
  // Postgres for the message store: a worker on it is ready in seconds.
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: taskQueue, HARNESS_HOME: path.join(dir, 'home'), DATABASE_URL: TEST_DATABASE_URL, OPENAI_BASE_URL: model.url });
  processes.push(await spawnWorker(env));
  const run = watchCli(['run', '--model', 'test-model', 'wait for a worker'], { env, cwd: dir });
  processes.push(run.child);
  const sessionId = await modelCallRunning(inject('temporalAddress'), () => run.out.stderr);

  await kill(processes[0], 'SIGKILL');
  const gone = Date.now();
  const noWorker = new RegExp(`^waiting: no worker polls task queue ${taskQueue} on Temporal at \\S+( \\(its last poll began \\d+ s ago\\))?(?: for \\d+ (s|min))?; retrying$`, 'm');
  // The first query after the kill may just time out (`no worker answered a query within 20 s`);
  // the next one hears Temporal's `no poller seen`, and past 75 s the task queue's last poll says it.
  await run.until(noWorker, 80_000);
  const runSaidAfter = Date.now() - gone;

  await sleep(Math.max(0, 60_000 - (Date.now() - gone)));
  const status: WatchedCli = watchCli(['status', sessionId], { env, cwd: dir });
  processes.push(status.child);
  await status.finished(45_000);
  expect(status.out.stdout, status.dump()).toMatch(new RegExp(`^session ${sessionId}: running$`, 'm'));
  // Temporal's "no poller", or (while the killed worker's last poll still looks recent) no answer from it.
  expect(status.out.stdout, status.dump()).toMatch(new RegExp(`^\\(no worker (polls|of) task queue ${taskQueue} .* — shown from history; `, 'm'));

  await sleep(Math.max(0, OUTAGE_MS - (Date.now() - gone)));
  const back = Date.now();
  processes.push(await spawnWorker(env));

  await run.finished(120_000);
  const runDoneAfter = Date.now() - back;
  expect(run.out.stdout, run.dump()).toContain('A worker came back. HARNESS_OK');
  expect(run.out.stderr, run.dump()).toMatch(/^… a worker answers again$/m);
  // The model was asked twice: the killed worker's request and the new worker's retry.
  expect(model.requests.filter((r) => r.session === sessionId).map((r) => r.index)).toEqual([0, 0]);
  // One line when it started and a reminder a minute: not a line per retry.
  const lines = run.out.stderr.split('\n').filter((l) => l.startsWith('waiting: '));
  expect(lines.length, run.dump()).toBeLessThanOrEqual(4);

  // The figures for the record: when the wait said so, and how long after the worker came back it finished.
  figure('worker-gone', `worker gone: run said "no worker polls" after ${Math.round(runSaidAfter / 1000)} s; finished ${Math.round(runDoneAfter / 1000)} s after a worker was back; it said:\n${lines.join('\n')}`);
}, 330_000);
