/** `harness worker`: runs a worker against TEMPORAL_ADDRESS (or the embedded dev server). */
import { rmSync, writeFileSync } from 'node:fs';
import { harnessHome } from '../lib/paths';
import { connectWorker, temporalSettings } from '../lib/temporal';
import { createHarnessWorker } from './worker';

/** Runs until SIGINT/SIGTERM; writes pid/ready files when asked to (background workers). */
export async function runWorker(env: NodeJS.ProcessEnv = process.env, log: (line: string) => void = console.error): Promise<void> {
  const s = temporalSettings(env);
  const home = harnessHome(env);
  const connection = await connectWorker(s);
  const worker = await createHarnessWorker({ connection, namespace: s.namespace, taskQueue: s.taskQueue, home, env });
  if (env.HARNESS_WORKER_PIDFILE) writeFileSync(env.HARNESS_WORKER_PIDFILE, String(process.pid));
  if (env.HARNESS_WORKER_READYFILE) writeFileSync(env.HARNESS_WORKER_READYFILE, String(process.pid));
  log(`worker ready: ${s.address} namespace=${s.namespace} task queue=${s.taskQueue} home=${home}`);
  try {
    await worker.run(); // the SDK shuts down gracefully on SIGINT/SIGTERM
  } finally {
    await connection.close();
    if (env.HARNESS_WORKER_READYFILE) rmSync(env.HARNESS_WORKER_READYFILE, { force: true });
  }
}
