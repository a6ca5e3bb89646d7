/**
 * Removing a session's sandbox once the session (or an eval trial) no longer needs it. The
 * removal heartbeats: a worker lost during it is noticed within seconds and another worker
 * removes the sandbox, rather than the caller waiting out the whole start-to-close timeout
 * (a lost worker held every trial's eval up by two minutes). Activity options are not part of
 * replay (the SDK compares an activity's type and id), so they change without a patch.
 */
import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import { DEFAULT_HOST_TIMEOUT_MS, type HostRef } from '../deterministic/host';
import { hostLost } from './turn/host-route';
import type { Activities } from './activity-options';

const CLOSE_SANDBOX: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1s', maximumAttempts: 5 },
};

const { closeSession } = proxyActivities<Activities>(CLOSE_SANDBOX);

/** Removes the session's sandbox where it lives: on its host (nothing to remove when that host is gone). */
export async function closeSandbox(sessionId: string, host?: HostRef, hostTimeoutMs?: number): Promise<void> {
  if (!host) return void (await closeSession({ sessionId }));
  const onHost = proxyActivities<Activities>({ ...CLOSE_SANDBOX, taskQueue: host.queue, scheduleToStartTimeout: hostTimeoutMs ?? DEFAULT_HOST_TIMEOUT_MS });
  try {
    await onHost.closeSession({ sessionId });
  } catch (err) {
    if (!hostLost(err)) throw err;
  }
}
