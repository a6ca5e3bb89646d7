/**
 * The embedded deployment: a Temporal dev server (SQLite under HARNESS_HOME, so sessions
 * survive a restart) and a background worker, started on demand by `harness run` and
 * reused by later commands until `harness dev --stop`. Starting and stopping happen under a
 * per-HARNESS_HOME lock (client/start-lock.ts), so processes started together start one server
 * and one worker; pid files are written only for processes that came up, and trusted only
 * after checking the process is still ours (machine/pids.ts).
 *
 * This file brings the deployment up (ensureEmbedded, `harness dev`). The server process itself
 * is dev-server.ts and stopping is embedded-stop.ts; their names are re-exported here, the one
 * path the CLI, scripts and tests import the deployment from.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { UserError } from '../machine/errors';
import { embeddedFiles, projectRoot } from '../machine/paths';
import { checkPidFile, removePidFileIf, writePidFile, type PidFileState } from '../machine/pids';
import { workerHoldsDatabase } from './database-holder';
import { exited, probeServer, spawnDevServer, waitForServer } from './dev-server';
import { acquireStartLock, WAITING_FOR_START_LOCK } from './start-lock';
import type { TemporalSettings } from './temporal-settings';
import { recordWorkerKeys } from './worker-keys';

export { embeddedFiles };

/** Starts a detached worker (`harness worker`) that writes its pid and a ready marker. */
async function spawnBackgroundWorker(home: string, env: NodeJS.ProcessEnv, timeoutMs = 90_000): Promise<void> {
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
  recordWorkerKeys(home, child.pid!, env);
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

/**
 * Brings up the server (under the lock): starts it when nothing listens, waits when something
 * does. Only `harness dev --ui` starts its Web UI (see devServerArgs).
 */
async function bringUpServer(s: TemporalSettings, home: string, say: (line: string) => void, detached: boolean, ui = false): Promise<ChildProcess | undefined> {
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
  if (detached) say(`Starting the embedded Temporal dev server on ${s.address} (data ${files.db}; see sessions with \`harness sessions\` or \`harness console\`) …`);
  const child = spawnDevServer(s, home, { detached, ui });
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

/** True when a pid file names a live process of ours. */
function ours(state: PidFileState): state is { state: 'ours'; pid: number } {
  return state.state === 'ours';
}

/**
 * Makes sure a server and a worker are there for the embedded deployment and says what it
 * started; a worker it starts gets `workerEnv` besides this process's environment (the config
 * file the command was given, whose declarations the worker loads). With TEMPORAL_ADDRESS set nothing is started: that cluster's workers are its own,
 * and connectClient waits for it when it is slow. Processes started together take turns
 * under the start lock; all but the first find the server and worker already there.
 */
export async function ensureEmbedded(s: TemporalSettings, home: string, say: (line: string) => void, workerEnv: NodeJS.ProcessEnv = {}): Promise<void> {
  if (!s.embedded) return;
  const files = embeddedFiles(home);
  if (ours(checkPidFile(files.workerPid, 'worker', home)) && (await probeServer(s)) === 'up') return;
  const lock = await acquireStartLock(home, { onWait: () => say(WAITING_FOR_START_LOCK) });
  try {
    await bringUpServer(s, home, say, true);
    if (!ours(checkPidFile(files.workerPid, 'worker', home)) && !(await workerHoldsDatabase(home, process.env))) {
      say(`Starting a background worker (log ${files.workerLog}); stop both with \`harness dev --stop\` …`);
      await spawnBackgroundWorker(home, { ...process.env, ...workerEnv });
    }
  } finally {
    await lock.release();
  }
}

/** What `harness dev` started in the foreground; `cleanup` removes its pid files on the way out. */
interface ForegroundDev {
  server?: ChildProcess;
  /** True when this process recorded itself as the deployment's worker. */
  recordedWorker: boolean;
  cleanup(): void;
}

/**
 * `harness dev`: brings up the server in the foreground (or finds it running) and records its
 * pid and this process's, so that `harness dev --stop` finds both even after a `kill -9`.
 */
export async function startForegroundDev(s: TemporalSettings, home: string, say: (line: string) => void, opts: { ui?: boolean } = {}): Promise<ForegroundDev> {
  const files = embeddedFiles(home);
  const lock = await acquireStartLock(home, { onWait: () => say(WAITING_FOR_START_LOCK) });
  let server: ChildProcess | undefined;
  let recordedWorker = false;
  try {
    server = await bringUpServer(s, home, say, false, opts.ui);
    if (server) {
      say(`Temporal dev server on ${s.address} · data ${files.db} · its HTTP API (port ${s.httpPort}) refuses every request${opts.ui ? '' : ' · no Web UI (`harness dev --ui` serves one)'}`);
      if (opts.ui) say(`Temporal Web UI on http://127.0.0.1:${s.uiPort}: it answers any Host header, so while it runs a web page whose name resolves to 127.0.0.1 can read and start sessions`);
    } else {
      say(`a Temporal server already answers on ${s.address}; starting only a worker${opts.ui ? ' (its Web UI is as it was started: `harness dev --stop`, then `harness dev --ui`, for one)' : ''}`);
    }
    const worker = checkPidFile(files.workerPid, 'worker', home);
    if (ours(worker)) {
      say(`a background worker (pid ${worker.pid}) serves it too; \`harness dev --stop\` stops it`);
    } else {
      // Recorded before the worker is ready: a `harness run` meanwhile must not start another.
      writePidFile(files.workerPid, process.pid);
      recordWorkerKeys(home, process.pid, process.env);
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
