/**
 * `harness status` of a running session whose worker is gone answers from history instead of
 * waiting for a worker (it used to wait up to its --wait-timeout, an hour by default, saying
 * "waiting: no worker polls … retrying"): the session is running, its current turn, the step
 * that turn is at, and that no worker polls the task queue. A worker process runs a turn whose
 * model call is slow, is SIGKILLed mid-call, and `status` is run through the CLI.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { stateQuery } from '../../deterministic/messages';
import { isNoPoller } from '../../client/wait-progress';
import { TEST_DATABASE_URL } from '../support/harness';
import { kill, spawnWorker, until } from '../support/processes';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, tempDir, writeScript } from '../support/cli';
import { modelCallRunning, watchCli } from '../support/watched-cli';

const processes: ChildProcess[] = [];
let client: Client;

beforeAll(async () => {
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
});
afterAll(async () => {
  for (const p of processes) await kill(p, 'SIGKILL');
  await client?.connection.close();
  removeTempDirs();
}, 60_000);

it('answers from history with no worker: running, the step, and that no worker polls the task queue', async () => {
  const dir = tempDir('harness-status-no-worker-');
  const taskQueue = `status-no-worker-${randomUUID()}`;
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: taskQueue, HARNESS_HOME: path.join(dir, 'home'), DATABASE_URL: TEST_DATABASE_URL });
  const worker = await spawnWorker(env);
  processes.push(worker);
  const script = writeScript(dir, { steps: [{ tool_calls: [{ name: 'get_current_time', arguments: {} }] }, { fault: { delay_ms: 600_000 }, content: 'never seen' }] });
  const run = watchCli(['run', '--model', `scripted:${script}`, 'tell the time, then think for long'], { env, cwd: dir });
  processes.push(run.child);
  // Step 2's model call is in flight (step 1's was quick): the worker goes with it.
  const sessionId = await modelCallRunning(inject('temporalAddress'), () => run.out.stderr);
  await kill(worker, 'SIGKILL');

  // At once: the server still counts the worker's last poll as recent, and no worker answers.
  const first = await runCli(['status', sessionId], { env, cwd: dir, timeoutMs: 30_000 });
  expect(first.code, describeResult(first)).toBe(0);
  const lines = first.stdout.split('\n');
  expect(lines[0], describeResult(first)).toBe(`session ${sessionId}: running`);
  expect(lines, describeResult(first)).toContain(`current turn: ${sessionId}/turn-1`);
  expect(first.stdout, describeResult(first)).toMatch(/^ {2}step 2 · /m);
  expect(first.stdout, describeResult(first)).toMatch(new RegExp(`^\\(no worker .*task queue ${taskQueue}.* — shown from history; `, 'm'));
  expect(first.stderr, describeResult(first)).not.toMatch(/^waiting: /m);

  // Once Temporal itself says nobody polls the task queue, status says that in its words.
  await until(
    'Temporal to say no worker polls',
    () =>
      client.workflow
        .getHandle(sessionId)
        .query(stateQuery)
        .then(
          () => false,
          (err: unknown) => isNoPoller(err),
        ),
    90_000,
  );
  const later = await runCli(['status', sessionId, '--json'], { env, cwd: dir, timeoutMs: 30_000 });
  expect(later.code, describeResult(later)).toBe(0);
  const view = parseJson(later);
  expect(view, describeResult(later)).toMatchObject({ session_id: sessionId, status: 'running', current_turn_id: `${sessionId}/turn-1`, turn_count: 1, progress: { step: 2 } });
  // Temporal's own "no poller" may take longer than status waits on a loaded machine: then the
  // worker that stopped answering is named by its queue and its last poll, as truthfully.
  expect(String(view.details_missing)).toMatch(new RegExp(`^no worker (polls task queue ${taskQueue} on Temporal at \\S+|of task queue ${taskQueue} answered within ).* — shown from history; `));
}, 240_000);
