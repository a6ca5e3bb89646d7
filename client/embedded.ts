/**
 * The embedded deployment: a Temporal dev server (SQLite under HARNESS_HOME, so sessions
 * survive a restart) and a background worker, started on demand by `harness run` and
 * reused by later commands until `harness dev --stop`. Starting and stopping happen under a
 * per-HARNESS_HOME lock (client/start-lock.ts), so processes started together start one server
 * and one worker; pid files are written only for processes that came up, and trusted only
 * after checking the process is still ours (host/pids.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { UserError } from '../host/errors';
import { embeddedFiles, projectRoot } from '../host/paths';

export { embeddedFiles };
import { checkPidFile, findEmbeddedServers, processAlive, removePidFileIf, writePidFile, type PidFileState } from '../host/pids';
import { workerHoldsDatabase } from './database-holder';
import { acquireStartLock } from './start-lock';
import { findTemporalCli } from './temporal-cli';
import { isReachable, tcpProbe, type TemporalSettings } from './temporal';

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
    // Pinned rather than random, so the worker knows to keep http_request away from them even
    // where it cannot list the server's ports (no /proc; see activities/tools/own-ports.ts).
    '--http-port',
    String(s.httpPort),
    '--metrics-port',
    String(s.metricsPort),
    ...(opts.headless ? ['--headless'] : ['--ui-port', String(s.uiPort)]),
  ];
}

/** Starts the dev server; detached ones outlive this process and log to a file. The caller records its pid once it is up. */
export function spawnDevServer(s: TemporalSettings, home: string, opts: { detached: boolean; headless?: boolean }): ChildProcess {
  const files = embeddedFiles(home);
  mkdirSync(path.dirname(files.serverLog), { recursive: true });
  const out = opts.detached ? openSync(files.serverLog, 'a') : 'inherit';
  const child = spawn(findTemporalCli(), devServerArgs(s, home, opts), {
    detached: opts.detached,
    stdio: ['ignore', out, out],
  });
  // The child has its own copy of the log's descriptor.
  if (typeof out === 'number') closeSync(out);
  if (opts.detached) child.unref();
  return child;
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Waits until the frontend answers, or fails naming the log; fails at once when `child` (the
 * server being waited for) exits. Patient with a loaded machine: "nothing listens yet" is
 * cheap to ask again, and a listening server gets seconds to answer.
 */
export async function waitForServer(s: TemporalSettings, logFile: string, timeoutMs = 60_000, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && exited(child)) {
      throw new UserError(`the embedded Temporal server exited (${child.exitCode ?? child.signalCode}) before answering on ${s.address}`, `see ${logFile}`);
    }
    if ((await tcpProbe(s.address, 2_000)) !== 'refused' && (await isReachable(s, 3_000))) return;
    await sleep(250);
  }
  throw new UserError(`the embedded Temporal server did not come up on ${s.address} within ${timeoutMs / 1000}s`, `see ${logFile}`);
}

/**
 * Whether the embedded server answers: `down` when nothing listens on its port, `busy` when
 * something listens but no Temporal frontend answered in a few tries (starting, overloaded,
 * or not Temporal at all).
 */
export async function probeServer(s: TemporalSettings): Promise<'up' | 'down' | 'busy'> {
  if ((await tcpProbe(s.address, 5_000)) === 'refused') return 'down';
  for (let i = 0; i < 3; i++) {
    if (await isReachable(s, 5_000)) return 'up';
    await sleep(250);
  }
  return 'busy';
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
  closeSync(out);
  // Recorded at once, so that a process arriving while it starts does not start another.
  writePidFile(files.workerPid, child.pid!);
  child.unref();
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (existsSync(files.workerReady)) return;
    if (exited(child)) break;
    await sleep(200);
  }
  if (!exited(child)) child.kill('SIGKILL');
  removePidFileIf(files.workerPid, child.pid);
  throw new UserError('the background worker did not start', `see ${files.workerLog}`);
}

/** Brings up the server (under the lock): starts it when nothing listens, waits when something does. */
async function bringUpServer(s: TemporalSettings, home: string, say: (line: string) => void, detached: boolean): Promise<ChildProcess | undefined> {
  const files = embeddedFiles(home);
  const state = await probeServer(s);
  if (state === 'up') return undefined;
  if (state === 'busy') {
    try {
      await waitForServer(s, files.serverLog);
      return undefined;
    } catch {
      throw new UserError(`something listens on ${s.address} but does not answer as a Temporal server`, 'stop it, or set HARNESS_EMBEDDED_PORT (and HARNESS_UI_PORT) to free ports');
    }
  }
  if (detached) say(`Starting the embedded Temporal dev server on ${s.address} (data ${files.db}, UI http://127.0.0.1:${s.uiPort}) …`);
  const child = spawnDevServer(s, home, { detached });
  try {
    await waitForServer(s, detached ? files.serverLog : 'the output above', 60_000, child);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  // Only a server that came up (and is the one answering) is recorded.
  if (!exited(child)) writePidFile(files.serverPid, child.pid!);
  return child;
}

const WAITING_FOR_LOCK = 'waiting for another harness process to bring up the embedded server …';

/** True when a pid file names a live process of ours. */
function ours(state: PidFileState): state is { state: 'ours'; pid: number } {
  return state.state === 'ours';
}

/**
 * Makes sure a server and a worker are there for the embedded deployment and says what it
 * started. With TEMPORAL_ADDRESS set nothing is started: that cluster's workers are its own,
 * and connectClient waits for it when it is slow. Processes started together take turns
 * under the start lock; all but the first find the server and worker already there.
 */
export async function ensureEmbedded(s: TemporalSettings, home: string, say: (line: string) => void): Promise<void> {
  if (!s.embedded) return;
  const files = embeddedFiles(home);
  if (ours(checkPidFile(files.workerPid, 'worker', home)) && (await probeServer(s)) === 'up') return;
  const lock = await acquireStartLock(home, { onWait: () => say(WAITING_FOR_LOCK) });
  try {
    await bringUpServer(s, home, say, true);
    if (!ours(checkPidFile(files.workerPid, 'worker', home)) && !(await workerHoldsDatabase(home, process.env))) {
      say(`Starting a background worker (log ${files.workerLog}); stop both with \`harness dev --stop\` …`);
      await spawnBackgroundWorker(home, process.env);
    }
  } finally {
    await lock.release();
  }
}

/** What `harness dev` started in the foreground; `cleanup` removes its pid files on the way out. */
export interface ForegroundDev {
  server?: ChildProcess;
  /** True when this process recorded itself as the deployment's worker. */
  recordedWorker: boolean;
  cleanup(): void;
}

/**
 * `harness dev`: brings up the server in the foreground (or finds it running) and records its
 * pid and this process's, so that `harness dev --stop` finds both even after a `kill -9`.
 */
export async function startForegroundDev(s: TemporalSettings, home: string, say: (line: string) => void): Promise<ForegroundDev> {
  const files = embeddedFiles(home);
  const lock = await acquireStartLock(home, { onWait: () => say(WAITING_FOR_LOCK) });
  let server: ChildProcess | undefined;
  let recordedWorker = false;
  try {
    server = await bringUpServer(s, home, say, false);
    if (server) say(`Temporal dev server on ${s.address} · Web UI http://127.0.0.1:${s.uiPort} · data ${files.db}`);
    else say(`a Temporal server already answers on ${s.address}; starting only a worker`);
    const worker = checkPidFile(files.workerPid, 'worker', home);
    if (ours(worker)) {
      say(`a background worker (pid ${worker.pid}) serves it too; \`harness dev --stop\` stops it`);
    } else {
      // Recorded before the worker is ready: a `harness run` meanwhile must not start another.
      writePidFile(files.workerPid, process.pid);
      recordedWorker = true;
    }
  } catch (err) {
    server?.kill('SIGTERM');
    throw err;
  } finally {
    await lock.release();
  }
  return {
    ...(server ? { server } : {}),
    recordedWorker,
    cleanup() {
      if (server) removePidFileIf(files.serverPid, server.pid);
      if (recordedWorker) removePidFileIf(files.workerPid, process.pid);
    },
  };
}

/** What stopEmbedded did. */
export interface StopReport {
  /** `worker (pid N)`, `server (pid N)`. */
  stopped: string[];
  /** Pid files that named a process that is gone or not ours: ignored and removed. */
  ignored: string[];
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone in the meantime
  }
}

async function stopPid(pid: number, stillOurs: () => boolean): Promise<void> {
  signal(pid, 'SIGTERM');
  for (let i = 0; i < 50 && processAlive(pid); i++) await sleep(100);
  // Checked again: after five seconds the pid could in principle be someone else's.
  if (processAlive(pid) && stillOurs()) signal(pid, 'SIGKILL');
  for (let i = 0; i < 20 && processAlive(pid); i++) await sleep(100);
}

/**
 * Stops what ensureEmbedded or `harness dev` started: the processes the pid files name once
 * checked to be ours, then any other server still running on this HARNESS_HOME's database.
 */
export async function stopEmbedded(home: string, say: (line: string) => void = () => undefined): Promise<StopReport> {
  const files = embeddedFiles(home);
  const report: StopReport = { stopped: [], ignored: [] };
  // No HARNESS_HOME, nothing of ours: do not create it just to take the lock.
  if (!existsSync(home)) return report;
  const lock = await acquireStartLock(home, { onWait: () => say(WAITING_FOR_LOCK) });
  try {
    for (const [role, file] of [
      ['worker', files.workerPid],
      ['server', files.serverPid],
    ] as const) {
      const check = checkPidFile(file, role, home);
      const name = path.basename(file);
      if (check.state === 'ours') {
        await stopPid(check.pid, () => checkPidFile(file, role, home).state === 'ours');
        report.stopped.push(`${role} (pid ${check.pid})`);
      } else if (check.state === 'dead') {
        report.ignored.push(`ignored stale ${name}: pid ${check.pid} is no longer running`);
      } else if (check.state === 'foreign') {
        report.ignored.push(`ignored stale ${name}: pid ${check.pid} is not this HARNESS_HOME's ${role === 'server' ? 'Temporal server' : 'worker'} (the pid was reused); left it running`);
      }
      rmSync(file, { force: true });
    }
    // A server no pid file names (its starter died before recording it, or the file was lost).
    for (const pid of findEmbeddedServers(home)) {
      await stopPid(pid, () => findEmbeddedServers(home).includes(pid));
      report.stopped.push(`server (pid ${pid})`);
    }
    rmSync(files.workerReady, { force: true });
  } finally {
    await lock.release();
  }
  return report;
}
