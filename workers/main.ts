/** `harness worker`: runs a worker against TEMPORAL_ADDRESS (or the embedded dev server). */
import { rmSync } from 'node:fs';
import { removePidFileIf, writePidFile } from '../machine/pids';
import { connectPatiently } from './connect';
import { writeErrLine } from '../machine/terminal/write';
import { UsageError } from '../machine/errors';
import { workerTuning } from './tuning';
import { assembleWorker } from './assemble';

/**
 * Runs until SIGINT/SIGTERM, then drains (workers/drain.ts): stops polling, lets activities in
 * flight finish within HARNESS_DRAIN_GRACE_SEC, leaves the session containers for the next
 * worker, and only then closes MCP servers, the store and the connection. Writes pid/ready files
 * when asked to (background workers). The worker itself is assembled as createHarnessWorker's
 * is (workers/assemble.ts).
 */
export async function runWorker(env: NodeJS.ProcessEnv = process.env, log: (line: string) => void = writeErrLine): Promise<void> {
  // Before anything starts: a bad value is a usage error (exit 2) naming its variable.
  const tuned = workerTuning(env);
  if (tuned.problems.length) throw new UsageError(tuned.problems.join('; '), 'fix or unset it (docs/worker-tuning.md lists each setting and its default)');
  const worker = await assembleWorker({ env, log, tuning: tuned.tuning, connect: (s) => connectPatiently(s, log) });
  if (worker === 'stopped') return;
  if (env.HARNESS_WORKER_PIDFILE) writePidFile(env.HARNESS_WORKER_PIDFILE, process.pid);
  try {
    await worker.run(() => {
      if (env.HARNESS_WORKER_READYFILE) writePidFile(env.HARNESS_WORKER_READYFILE, process.pid);
    });
  } finally {
    if (env.HARNESS_WORKER_READYFILE) rmSync(env.HARNESS_WORKER_READYFILE, { force: true });
    // Only while it still names us: a worker started after us may have taken the file over.
    if (env.HARNESS_WORKER_PIDFILE) removePidFileIf(env.HARNESS_WORKER_PIDFILE, process.pid);
  }
}
