/**
 * `harness worker` started before its Temporal server (a stack coming up in any order): it says
 * in one line that Temporal is unreachable and why, keeps trying, and serves turns once the
 * server is there; a host name that does not resolve reads the same way. Never a stack trace.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port';
import { temporalSettings } from '../../client/temporal-settings';
import { TEST_DATABASE_URL } from '../support/harness';
import { kill } from '../support/processes';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir, writeScript } from '../support/cli';
import { watchCli } from '../support/watched-cli';
import { startOwnServer } from '../support/embedded-procs';

const processes: ChildProcess[] = [];

afterAll(async () => {
  for (const p of processes.reverse()) await kill(p, 'SIGKILL');
  removeTempDirs();
}, 60_000);

it('waits for a server that is not up yet, saying why, and serves a turn once it is', async () => {
  const dir = tempDir('harness-worker-first-');
  const home = path.join(dir, 'server');
  mkdirSync(home);
  const settings = temporalSettings({ HARNESS_EMBEDDED_PORT: String(await freePort()), HARNESS_UI_PORT: String(await freePort()) });
  const env = cliEnv({ TEMPORAL_ADDRESS: settings.address, HARNESS_TASK_QUEUE: 'worker-first', HARNESS_HOME: path.join(dir, 'harness'), DATABASE_URL: TEST_DATABASE_URL });

  const worker = watchCli(['worker'], { env, cwd: dir });
  processes.push(worker.child);
  const address = settings.address.replace(/\./g, '\\.');
  await worker.until(new RegExp(`^waiting: Temporal at ${address} is unreachable \\(connection refused\\); retrying until it answers`, 'm'), 60_000);

  await startOwnServer(settings, home, (child) => processes.push(child));
  await worker.until(/^worker ready: /m, 60_000);
  expect(worker.out.stderr, worker.dump()).toMatch(new RegExp(`^Temporal at ${address} answers; connected$`, 'm'));
  expect(stackLines(worker.out.stderr), worker.dump()).toEqual([]);

  const script = writeScript(dir, { steps: [{ content: 'Served after the wait. HARNESS_OK' }] });
  const r = await runCli(['run', '--model', `scripted:${script}`, 'hello', '--json'], { env, cwd: dir, timeoutMs: 120_000 });
  expect(r.code, describeResult(r)).toBe(0);
  expect(parseJson(r).answer).toBe('Served after the wait. HARNESS_OK');
}, 240_000);

it('says "host not found" for a server name that does not resolve, and keeps waiting', async () => {
  const dir = tempDir('harness-worker-noname-');
  const env = cliEnv({ TEMPORAL_ADDRESS: 'temporal.invalid:7233', HARNESS_TASK_QUEUE: 'worker-noname', HARNESS_HOME: path.join(dir, 'harness'), DATABASE_URL: TEST_DATABASE_URL });
  const worker = watchCli(['worker'], { env, cwd: dir });
  processes.push(worker.child);
  await worker.until(/^waiting: Temporal at temporal\.invalid:7233 is unreachable \(host not found\); retrying until it answers \(check TEMPORAL_ADDRESS/m, 60_000);
  await new Promise((r) => setTimeout(r, 3_000));
  expect(worker.out.code, worker.dump()).toBeUndefined();
  expect(stackLines(worker.out.stderr), worker.dump()).toEqual([]);
  // Said once, not once per try.
  expect(worker.out.stderr.match(/^waiting: /gm), worker.dump()).toHaveLength(1);
}, 120_000);
