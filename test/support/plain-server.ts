/**
 * A Temporal dev server of the test's own that dispatches activities as a deployed server does.
 * `temporal server start-dev` turns on eager activity execution, which a server's own default
 * leaves off: an activity a workflow task schedules is then handed straight to the worker that
 * completed the task, bypassing the queue. Tests of which worker takes an activity (several
 * workers on one queue, as in a deployment) need the queue to decide, as it does there.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { findTemporalCli } from '../../client/temporal-cli';
import { DEV_SERVER_TUNING } from '../../client/dev-server';
import { isReachable } from '../../client/temporal';
import { temporalSettings } from '../../client/temporal-settings';
import { freePort } from '../../scripts/free-port';

export interface PlainServer {
  address: string;
  stop(): Promise<void>;
}

/** Starts the server (in memory, headless) and resolves once it answers. */
export async function startPlainServer(): Promise<PlainServer> {
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const server: ChildProcess = spawn(
    findTemporalCli(),
    [
      ...['server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'error', ...DEV_SERVER_TUNING],
      ...['--dynamic-config-value', 'system.enableActivityEagerExecution=false'],
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  const stop = async () => {
    server.kill('SIGTERM');
    if (!(await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]))) server.kill('SIGKILL');
  };
  const s = temporalSettings({ TEMPORAL_ADDRESS: address });
  for (let i = 0; i < 240 && !(await isReachable(s, 1000)); i++) await sleep(250);
  if (!(await isReachable(s, 1000))) {
    await stop();
    throw new Error(`temporal dev server did not start on ${address}`);
  }
  return { address, stop };
}
