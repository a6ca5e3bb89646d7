/**
 * A turn sleeping in a `wait` call outlives its Temporal server: the server is SIGKILLed while the
 * turn sleeps and started again on the same database file; `status` still shows the sleep, and
 * `harness wake` ends it so the turn goes on to its answer. The test runs its own dev server (the
 * shared one is not disturbed) and a real `harness worker` process.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port';
import { temporalSettings } from '../../client/temporal-settings';
import { newSessionId, TEST_DATABASE_URL } from '../support/harness';
import { kill, spawnWorker } from '../support/processes';
import { startOwnServer } from '../support/embedded-procs';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, tempDir, writeScript } from '../support/cli';
import { watchCli } from '../support/watched-cli';

const processes: ChildProcess[] = [];

afterAll(async () => {
  for (const p of processes.reverse()) await kill(p, 'SIGKILL');
  removeTempDirs();
}, 60_000);

it('a sleeping turn is woken after its server was killed and started again, and goes on', async () => {
  const dir = tempDir('harness-wait-server-');
  const home = path.join(dir, 'server');
  mkdirSync(home);
  const settings = temporalSettings({ HARNESS_EMBEDDED_PORT: String(await freePort()), HARNESS_UI_PORT: String(await freePort()) });
  // The same port and database file each time: the restarted server has the session and its timer.
  const startServer = () => startOwnServer(settings, home, (child) => processes.push(child));
  const server = await startServer();
  const env = cliEnv({ TEMPORAL_ADDRESS: settings.address, HARNESS_TASK_QUEUE: 'wait-server', HARNESS_HOME: path.join(dir, 'harness'), DATABASE_URL: TEST_DATABASE_URL });
  processes.push(await spawnWorker(env));
  const cli = (args: string[]) => runCli(args, { env, cwd: dir, timeoutMs: 120_000 });
  const script = writeScript(dir, {
    steps: [
      { tool_calls: [{ name: 'wait', arguments: { seconds: 3600, reason: 'the server to come back' } }] },
      { expect: { last_message_contains: 'the server is back' }, content: 'Slept through a server restart. DONE' },
    ],
  });
  const sessionId = newSessionId('wait-server');
  // `run` follows the sleeping turn; the test goes on beside it.
  const run = watchCli(['run', '--model', `scripted:${script}`, '--session', sessionId, 'sleep through a server restart'], { env, cwd: dir });
  processes.push(run.child);
  const sleepingNow = async () => {
    const r = await cli(['status', sessionId, '--json']);
    return r.code === 0 ? parseJson<{ sleeping?: { until: string } }>(r).sleeping?.until ?? 'not yet' : describeResult(r);
  };
  await expect.poll(sleepingNow, { timeout: 60_000, interval: 500 }).toMatch(/^\d{4}-/);
  const until = await sleepingNow();

  await kill(server, 'SIGKILL');
  await startServer();
  // The worker reconnects and replays the session for the query: the same sleep.
  await expect.poll(sleepingNow, { timeout: 90_000, interval: 500 }).toBe(until);

  const woke = await cli(['wake', sessionId, '--reason', 'the server is back']);
  expect(woke.code, describeResult(woke)).toBe(0);
  expect(woke.stdout).toContain('Slept through a server restart. DONE');
  // The `run` that followed the turn all along prints the same answer.
  await run.finished(60_000);
  expect(run.out.stdout).toContain('Slept through a server restart. DONE');
});
