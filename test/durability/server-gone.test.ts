/**
 * Crash test: the Temporal server is SIGKILLed while `run` waits on a
 * model call and stays down for 60 s. `run` and a `status` started during the outage say in one
 * line that Temporal is unreachable, keep waiting, and print the answer once the server is back.
 * The test runs its own dev server (the shared one is not disturbed) on a database file, so the
 * restarted server has the session.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port';
import { temporalSettings } from '../../client/temporal-settings';
import { TEST_DATABASE_URL } from '../support/harness';
import { kill, spawnWorker } from '../support/processes';
import { startOwnServer } from '../support/embedded-procs';
import { cliEnv, removeTempDirs, tempDir, writeScript } from '../support/cli';
import { modelCallRunning, watchCli, type WatchedCli } from '../support/watched-cli';
import { figure } from '../support/figures';

const OUTAGE_MS = 60_000;
const processes: ChildProcess[] = [];

afterAll(async () => {
  for (const p of processes.reverse()) await kill(p, 'SIGKILL');
  removeTempDirs();
}, 60_000);

it('run and status wait through a server gone for 60 s, saying Temporal is unreachable, and print the answer after', async () => {
  const dir = tempDir('harness-server-gone-');
  const home = path.join(dir, 'server');
  mkdirSync(home);
  const settings = temporalSettings({ HARNESS_EMBEDDED_PORT: String(await freePort()), HARNESS_UI_PORT: String(await freePort()) });
  // The same port and database file each time: the restarted server has the session.
  const startServer = () => startOwnServer(settings, home, (child) => processes.push(child));
  const server = await startServer();
  const env = cliEnv({ TEMPORAL_ADDRESS: settings.address, HARNESS_TASK_QUEUE: 'server-gone', HARNESS_HOME: path.join(dir, 'harness'), DATABASE_URL: TEST_DATABASE_URL });
  processes.push(await spawnWorker(env));
  const script = writeScript(dir, { steps: [{ fault: { delay_ms: 30_000 }, content: 'The server came back. HARNESS_OK' }] });
  const run = watchCli(['run', '--model', `scripted:${script}`, 'wait for the server'], { env, cwd: dir });
  processes.push(run.child);
  const sessionId = await modelCallRunning(settings.address, () => run.out.stderr);

  await kill(server, 'SIGKILL');
  const gone = Date.now();
  const unreachable = /^waiting: Temporal at 127\.0\.0\.1:\d+ is unreachable \(connection refused\)(?: for \d+ (s|min))?; retrying$/m;
  await run.until(unreachable, 30_000);

  await sleep(15_000);
  const status: WatchedCli = watchCli(['status', sessionId], { env, cwd: dir });
  processes.push(status.child);
  await status.until(unreachable, 30_000);

  await sleep(Math.max(0, OUTAGE_MS - (Date.now() - gone)));
  const back = Date.now();
  await startServer();

  await run.finished(150_000);
  const runDoneAfter = Date.now() - back;
  expect(run.out.stdout, run.dump()).toContain('The server came back. HARNESS_OK');
  expect(run.out.stderr, run.dump()).toMatch(/^… (Temporal|a worker) answers again$/m);
  const lines = run.out.stderr.split('\n').filter((l) => l.startsWith('waiting: '));
  expect(lines.length, run.dump()).toBeLessThanOrEqual(4);

  await status.finished(60_000);
  const statusDoneAfter = Date.now() - back;
  expect(status.out.stdout, status.dump()).toMatch(new RegExp(`^session ${sessionId}: (running|idle)$`, 'm'));
  figure('server-gone', 
    `server gone: run finished ${Math.round(runDoneAfter / 1000)} s and status within ${Math.round(statusDoneAfter / 1000)} s after the server was back; run said:\n${lines.join('\n')}`,
  );
}, 330_000);
