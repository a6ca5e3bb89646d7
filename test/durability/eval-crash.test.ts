/**
 * An eval survives its worker: the worker running a suite is SIGKILLed mid-suite (trials in
 * flight), a new worker takes over, and `harness eval status` (a new CLI process; the one that
 * started the eval returned at once) gets a report with every trial, each counted once.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { EvalProgress, EvalReport } from '../../deterministic/eval';
import { TEST_DATABASE_URL } from '../support/harness';
import { kill, spawnWorker } from '../support/processes';
import { cliEnv, describeResult, parseJson, runCli } from '../support/cli';

let client: Client;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
});
afterAll(async () => {
  for (const w of workers) await kill(w, 'SIGKILL');
  await client?.connection.close();
});

it('a worker killed mid-suite: a new worker finishes it and every trial is counted once', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-eval-crash-'));
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `eval-crash-${randomUUID()}`, HARNESS_HOME: path.join(dir, 'home'), DATABASE_URL: TEST_DATABASE_URL });
  // Model calls heartbeat every few seconds here, so a call on the killed worker is retried soon.
  const config = path.join(dir, 'harness.config.json');
  writeFileSync(config, JSON.stringify({ limits: { modelHeartbeatSec: 3 } }));
  const suite = path.join(dir, 'slow.jsonl');
  const cases = Array.from({ length: 8 }, (_, i) => ({
    id: `case-${i}`,
    input: 'Say hello.',
    // Each answer takes a second and a half: trials are in flight when the worker dies.
    model_script: { steps: [{ fault: { delay_ms: 1500 }, content: `hello ${i}` }] },
    checks: [{ type: 'contains', value: `hello ${i}` }],
  }));
  writeFileSync(suite, cases.map((c) => JSON.stringify(c)).join('\n'));

  workers.push(await spawnWorker(env));
  const started = await runCli(['eval', suite, '--no-wait', '--json', '--concurrency', '2', '--config', config], { env, timeoutMs: 60_000 });
  expect(started.code, describeResult(started)).toBe(0);
  const { eval_id } = parseJson<{ eval_id: string }>(started);

  // Kill the worker once some trials are done and others are running.
  const handle = client.workflow.getHandle(eval_id);
  for (let p: EvalProgress | undefined; !(p && p.done >= 2 && p.running > 0); await sleep(200)) {
    p = (await handle.query('evalProgress').catch(() => undefined)) as EvalProgress | undefined;
  }
  await kill(workers[0], 'SIGKILL');
  workers.push(await spawnWorker(env));

  const r = await runCli(['eval', 'status', eval_id, '--json', '--out', path.join(dir, 'report.json')], { env, timeoutMs: 180_000 });
  expect(r.code, describeResult(r)).toBe(0);
  const report = parseJson<EvalReport>(r);
  expect(report.totals).toMatchObject({ cases: 8, trials: 8, passed_trials: 8 });
  for (const c of report.cases) expect(c.runs.map((x) => x.trial), c.id).toEqual([1]);
  expect(new Set(report.cases.map((c) => c.runs[0]!.workflow_id)).size).toBe(8);
}, 240_000);
