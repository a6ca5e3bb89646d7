/**
 * A worker lost while it removes an eval trial's sandbox: the removal heartbeats, so the attempt
 * on the dead worker ends by a missed heartbeat and a new worker removes the sandbox, rather than
 * the eval waiting out the removal's whole start-to-close timeout (two minutes, for every trial
 * it held up). Read from the eval's history: no clock is asserted.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import type { EvalReport } from '../../deterministic/eval';
import { failpointFile } from '../../activities/failpoints';
import { TEST_DATABASE_URL } from '../support/harness';
import { kill, spawnWorker, until } from '../support/processes';
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

it('a worker killed while removing a trial\'s sandbox: another removes it after a missed heartbeat', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-eval-close-'));
  const home = path.join(dir, 'home');
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `eval-close-${randomUUID()}`, HARNESS_HOME: home, DATABASE_URL: TEST_DATABASE_URL });
  // A trial that runs a command has a sandbox to remove once it is checked.
  const suite = path.join(dir, 'shell.jsonl');
  const shell = {
    id: 'shell',
    input: 'Say hi in the shell.',
    approvals: 'approve',
    model_script: { steps: [{ tool_calls: [{ name: 'run_shell', arguments: { command: 'echo hi' } }] }, { content: 'The shell said hi.' }] },
    checks: [{ type: 'tool_called', name: 'run_shell' }, { type: 'contains', value: 'said hi' }],
  };
  writeFileSync(suite, `${JSON.stringify(shell)}\n`);

  // The first worker stops inside the removal (for ten minutes) and is killed there.
  workers.push(await spawnWorker({ ...env, HARNESS_FAILPOINTS: 'close-session=600000' }));
  const started = await runCli(['eval', suite, '--no-wait', '--json'], { env, timeoutMs: 60_000 });
  expect(started.code, describeResult(started)).toBe(0);
  const { eval_id } = parseJson<{ eval_id: string }>(started);
  await until('the removal of the trial\'s sandbox to start', () => existsSync(failpointFile(home, 'close-session')), 180_000);
  await kill(workers[0], 'SIGKILL');
  workers.push(await spawnWorker(env));

  const r = await runCli(['eval', 'status', eval_id, '--json', '--out', path.join(dir, 'report.json')], { env, timeoutMs: 300_000 });
  expect(r.code, describeResult(r)).toBe(0);
  expect(parseJson<EvalReport>(r).totals).toMatchObject({ trials: 1, passed_trials: 1 });

  // The removal asked for heartbeats, and its attempt on the killed worker ended by missing one.
  const events = (await client.workflow.getHandle(eval_id).fetchHistory()).events ?? [];
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'closeSession');
  expect(scheduled, 'closeSession was scheduled').toBeDefined();
  expect(Number(scheduled!.activityTaskScheduledEventAttributes!.heartbeatTimeout?.seconds ?? 0)).toBeGreaterThan(0);
  const startedEvent = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === String(scheduled!.eventId));
  const attrs = startedEvent?.activityTaskStartedEventAttributes;
  expect(attrs?.attempt).toBeGreaterThanOrEqual(2);
  expect(attrs?.lastFailure?.timeoutFailureInfo?.timeoutType).toBe(temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_HEARTBEAT);
}, 420_000);
