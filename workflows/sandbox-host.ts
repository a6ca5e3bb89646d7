/**
 * A session's sandbox host (deterministic/host.ts): the worker whose task queue holds the
 * session's workspace and sandbox. An activity for the sandbox goes to that queue with a
 * schedule-to-start bound, so one whose host's worker is gone fails after the bound instead of
 * waiting for it forever; what then happens instead is the caller's to say (another worker claims
 * the session, does the work itself, or there is nothing left to do). Sessions of workers without
 * a host id have no host: their activities take the paths they always took.
 *
 * Also here: removing a session's sandbox once the session (or an eval trial) no longer needs it.
 * The removal heartbeats: a worker lost during it is noticed within seconds and another worker
 * removes the sandbox, rather than the caller waiting out the whole start-to-close timeout (a lost
 * worker held every trial's eval up by two minutes). Activity options are not part of replay (the
 * SDK compares an activity's type and id), so they change without a patch.
 */
import { ActivityFailure, proxyActivities, TimeoutFailure, type ActivityOptions } from '@temporalio/workflow';
import { DEFAULT_HOST_TIMEOUT_MS, type HostRef } from '../deterministic/host';
import type { Activities } from './activity-options';

/** The options that send an activity to a host's queue, and how long its worker may take to pick it up. */
export type OnHost = Required<Pick<ActivityOptions, 'taskQueue' | 'scheduleToStartTimeout'>>;

/** Whether an activity failed because no worker of its queue took it in time: its host is gone. */
export function hostLost(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'SCHEDULE_TO_START';
}

/**
 * Runs `run` with the options of the session's host (`onHost`), or, for a session without one,
 * with none: where it always ran, nothing added around it. When the host's worker never took the
 * activity (the host is lost), `lost` runs instead; any other failure is thrown.
 */
export function onSandboxHost<T>(host: HostRef | undefined, timeoutMs: number, run: (onHost?: OnHost) => Promise<T>, lost: (host: HostRef) => Promise<T>): Promise<T> {
  if (!host) return run();
  return tryOnHost(host, timeoutMs, run, lost);
}

async function tryOnHost<T>(host: HostRef, timeoutMs: number, run: (onHost: OnHost) => Promise<T>, lost: (host: HostRef) => Promise<T>): Promise<T> {
  try {
    return await run({ taskQueue: host.queue, scheduleToStartTimeout: timeoutMs });
  } catch (err) {
    if (!hostLost(err)) throw err;
  }
  return lost(host);
}

const CLOSE_SANDBOX: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1s', maximumAttempts: 5 },
};

const shared = proxyActivities<Activities>(CLOSE_SANDBOX);

/** Removes the session's sandbox where it lives: on its host (nothing to remove when that host is gone). */
export async function closeSandbox(sessionId: string, host?: HostRef, hostTimeoutMs?: number): Promise<void> {
  const close = (onHost?: OnHost) => (onHost ? proxyActivities<Activities>({ ...CLOSE_SANDBOX, ...onHost }) : shared).closeSession({ sessionId });
  await onSandboxHost(host, hostTimeoutMs ?? DEFAULT_HOST_TIMEOUT_MS, close, async () => undefined);
}
