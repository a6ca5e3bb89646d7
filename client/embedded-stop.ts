/**
 * `harness dev --stop`: stops the embedded deployment's worker and server, under the same start
 * lock as starting them, so a stop never races a start. Pid files are trusted only once the
 * process is checked to be ours (machine/pids.ts): a reused pid is left running.
 */
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { embeddedFiles } from '../machine/paths';
import { checkPidFile, findEmbeddedServers, processAlive } from '../machine/pids';
import { acquireStartLock, WAITING_FOR_START_LOCK } from './start-lock';
import { workerTuning } from '../workers/tuning';

/** What stopEmbedded did. */
interface StopReport {
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

async function stopPid(pid: number, stillOurs: () => boolean, patienceMs = 5_000): Promise<void> {
  signal(pid, 'SIGTERM');
  for (let i = 0; i < patienceMs / 100 && processAlive(pid); i++) await sleep(100);
  // Checked again: after that long the pid could in principle be someone else's.
  if (processAlive(pid) && stillOurs()) signal(pid, 'SIGKILL');
  for (let i = 0; i < 20 && processAlive(pid); i++) await sleep(100);
}

/**
 * Stops what ensureEmbedded or `harness dev` started: the processes the pid files name once
 * checked to be ours, then any other server still running on this HARNESS_HOME's database.
 */
export async function stopEmbedded(home: string, say: (line: string) => void = () => undefined, env: NodeJS.ProcessEnv = process.env): Promise<StopReport> {
  const files = embeddedFiles(home);
  const report: StopReport = { stopped: [], ignored: [] };
  // No HARNESS_HOME, nothing of ours: do not create it just to take the lock.
  if (!existsSync(home)) return report;
  const lock = await acquireStartLock(home, { onWait: () => say(WAITING_FOR_START_LOCK) });
  try {
    for (const [role, file] of [
      ['worker', files.workerPid],
      ['server', files.serverPid],
    ] as const) {
      const check = checkPidFile(file, role, home);
      const name = path.basename(file);
      if (check.state === 'ours') {
        // A worker drains first (calls in flight finish within the grace, workers/tuning.ts); an idle one exits at once.
        const patience = role === 'worker' ? workerTuning(env).tuning.drainGraceMs + 10_000 : 5_000;
        await stopPid(check.pid, () => checkPidFile(file, role, home).state === 'ours', patience);
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
