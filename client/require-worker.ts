/** Refusing to start work that no worker would run: the check `run`, `chat`, `fork`, `retry` and `eval` make before sending. */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { UserError } from '../machine/errors';
import { addressOf, noWorker } from './wait-progress';
import { workerPresence } from './worker-presence';

/** Hint for a workflow that no worker serves. */
export const NO_WORKER_HINT =
  'start a worker with `harness worker` (or `harness dev`); with TEMPORAL_ADDRESS set, check it and HARNESS_TASK_QUEUE, or unset it to use the embedded server';

/** The longest a worker that is still starting (opening its stores, bundling) is waited for. */
const STARTING_WORKER_MS = 3 * 60_000;

/**
 * Fails with a one-line error when no worker polls `taskQueue`: a message sent then would sit
 * in an update that only a worker accepts (so the send would hang), and a new session would be
 * started with nobody to run it. A worker that was just started gets `graceMs` to poll first.
 */
export async function requireWorker(
  client: Client,
  taskQueue: string,
  opts: { graceMs?: number; hint?: string; starting?: () => boolean } = {},
): Promise<void> {
  // Long enough for a worker that has just started (its first poll) on a loaded machine; a
  // worker known to be still starting (`starting`) gets up to a few minutes more.
  const until = Date.now() + (opts.graceMs ?? 10_000);
  const cap = Date.now() + STARTING_WORKER_MS;
  for (;;) {
    if ((await workerPresence(client, taskQueue)) !== 'absent') return;
    if (Date.now() >= until && !(Date.now() < cap && opts.starting?.())) {
      throw new UserError(`${noWorker(taskQueue, addressOf(client)).text}, so nothing was sent`, opts.hint ?? NO_WORKER_HINT);
    }
    await sleep(500);
  }
}
