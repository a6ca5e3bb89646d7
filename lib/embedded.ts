/**
 * The embedded deployment: a Temporal dev server (SQLite under HARNESS_HOME, so sessions
 * survive a restart) and a background worker, started on demand by `harness run` and
 * reused by later commands until `harness dev --stop`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { UserError } from './errors';
import { projectRoot } from './paths';
import { findTemporalCli } from './temporal-cli';
import { isReachable, type TemporalSettings } from './temporal';

/** Files the embedded deployment keeps under HARNESS_HOME. */
export function embeddedFiles(home: string) {
  return {
    db: path.join(home, 'temporal.db'),
    serverPid: path.join(home, 'server.pid'),
    serverLog: path.join(home, 'logs', 'temporal.log'),
    workerPid: path.join(home, 'worker.pid'),
    workerReady: path.join(home, 'worker.ready'),
    workerLog: path.join(home, 'logs', 'worker.log'),
  };
}

/**
 * Dev-server settings that matter for latency. The history service reads its transfer and
 * timer queues at most 20 times a second per shard by default, so every workflow step waited
 * for the next 50 ms slot (measured: 51 → 8 ms per activity round trip). WAL journaling with
 * synchronous=normal syncs at checkpoints instead of ~26 times a step: the database stays
 * consistent and survives process crashes and server restarts; an OS crash or power loss can
 * lose the last few commits (use a cluster with Postgres where that matters).
 */
export const DEV_SERVER_TUNING = [
  '--dynamic-config-value',
  'history.transferProcessorMaxPollRPS=1000',
  '--dynamic-config-value',
  'history.timerProcessorMaxPollRPS=1000',
  '--sqlite-pragma',
  'journal_mode=wal',
  '--sqlite-pragma',
  'synchronous=normal',
];

/** Arguments of `temporal server start-dev` for the embedded server. */
export function devServerArgs(s: TemporalSettings, home: string, opts: { headless?: boolean } = {}): string[] {
  return [
    'server',
    'start-dev',
    '--db-filename',
    embeddedFiles(home).db,
    '--ip',
    '127.0.0.1',
    '--port',
    String(s.embeddedPort),
    '--namespace',
    s.namespace,
    '--log-level',
    'warn',
    ...DEV_SERVER_TUNING,
    ...(opts.headless ? ['--headless'] : ['--ui-port', String(s.uiPort)]),
  ];
}

/** Starts the dev server; detached ones outlive this process and log to a file. */
export function spawnDevServer(s: TemporalSettings, home: string, opts: { detached: boolean; headless?: boolean }): ChildProcess {
  const files = embeddedFiles(home);
  mkdirSync(path.dirname(files.serverLog), { recursive: true });
  const out = opts.detached ? openSync(files.serverLog, 'a') : 'inherit';
  const child = spawn(findTemporalCli(), devServerArgs(s, home, opts), {
    detached: opts.detached,
    stdio: ['ignore', out, out],
  });
  if (opts.detached) {
    writeFileSync(files.serverPid, String(child.pid));
    child.unref();
  }
  return child;
}

/** Waits until the frontend answers, or fails naming the log. */
export async function waitForServer(s: TemporalSettings, logFile: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await isReachable(s, 1_000)) return;
    await sleep(250);
  }
  throw new UserError(`the embedded Temporal server did not come up on ${s.address} within ${timeoutMs / 1000}s`, `see ${logFile}`);
}

/** True when a pid file names a live process. */
export function pidAlive(file: string): boolean {
  if (!existsSync(file)) return false;
  const pid = Number(readFileSync(file, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Starts a detached worker (`harness worker`) that writes its pid and a ready marker. */
export async function spawnBackgroundWorker(home: string, env: NodeJS.ProcessEnv, timeoutMs = 90_000): Promise<void> {
  const files = embeddedFiles(home);
  mkdirSync(path.dirname(files.workerLog), { recursive: true });
  rmSync(files.workerReady, { force: true });
  const out = openSync(files.workerLog, 'a');
  const child = spawn(process.execPath, [path.join(projectRoot(), 'bin', 'harness.js'), 'worker'], {
    detached: true,
    stdio: ['ignore', out, out],
    env: { ...env, HARNESS_HOME: home, HARNESS_WORKER_PIDFILE: files.workerPid, HARNESS_WORKER_READYFILE: files.workerReady },
  });
  writeFileSync(files.workerPid, String(child.pid));
  child.unref();
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (existsSync(files.workerReady)) return;
    if (!pidAlive(files.workerPid)) break;
    await sleep(200);
  }
  throw new UserError('the background worker did not start', `see ${files.workerLog}`);
}

/**
 * Makes sure a server and a worker are there for the embedded deployment and says what it
 * started. With TEMPORAL_ADDRESS set nothing is started: that cluster's workers are its own.
 */
export async function ensureEmbedded(s: TemporalSettings, home: string, say: (line: string) => void): Promise<void> {
  if (await isReachable(s)) {
    if (!s.embedded) return;
  } else {
    if (!s.embedded) {
      throw new UserError(`cannot reach Temporal at ${s.address}`, 'check TEMPORAL_ADDRESS, or unset it to use the embedded dev server');
    }
    const files = embeddedFiles(home);
    say(`Starting the embedded Temporal dev server on ${s.address} (data ${files.db}, UI http://127.0.0.1:${s.uiPort}) …`);
    spawnDevServer(s, home, { detached: true });
    await waitForServer(s, files.serverLog);
  }
  const files = embeddedFiles(home);
  if (!pidAlive(files.workerPid)) {
    say(`Starting a background worker (log ${files.workerLog}); stop both with \`harness dev --stop\` …`);
    await spawnBackgroundWorker(home, process.env);
  }
}

/** Stops what ensureEmbedded started; returns what it stopped. */
export async function stopEmbedded(home: string): Promise<string[]> {
  const files = embeddedFiles(home);
  const stopped: string[] = [];
  for (const [what, file] of [
    ['worker', files.workerPid],
    ['server', files.serverPid],
  ] as const) {
    if (pidAlive(file)) {
      const pid = Number(readFileSync(file, 'utf8').trim());
      process.kill(pid, 'SIGTERM');
      for (let i = 0; i < 50 && pidAlive(file); i++) await sleep(100);
      if (pidAlive(file)) process.kill(pid, 'SIGKILL');
      stopped.push(`${what} (pid ${pid})`);
    }
    rmSync(file, { force: true });
  }
  rmSync(files.workerReady, { force: true });
  return stopped;
}
