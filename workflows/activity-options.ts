/**
 * Activity options more than one workflow uses: the store activities' (a session's script, a
 * turn's preparation and call records, a fork's conversation), the tools' retry policy and
 * margins, and the MCP discovery activity, bounded by the servers' own startup timeouts.
 */
import { proxyActivities, type ActivityOptions, type RetryPolicy } from '@temporalio/workflow';
import type { createActivities } from '../activities';

export type Activities = ReturnType<typeof createActivities>;

export const TOOL_RETRY: RetryPolicy = { maximumAttempts: 3, initialInterval: '200ms', nonRetryableErrorTypes: ['INVALID_SESSION', 'INVALID_SCRIPT'] };

/**
 * Activities that are mostly a message-store read or write (a session's script, a turn's call
 * records, a fork's conversation). A store outage (STORE_UNAVAILABLE: the database restarting
 * or refusing) is ridden out by time, not by three attempts that a few seconds of outage use up:
 * retried with backoff up to 15 s for ten minutes. An attempt is seconds, never minutes, so a
 * lost one (a worker or server gone) is retried after a minute at most. Options are not part of
 * replay (the SDK compares an activity's type and id only) and a scheduled activity keeps the
 * ones it was given, so changing them needs no patch.
 */
export const STORE_ACTIVITY: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '15s', maximumAttempts: 100, nonRetryableErrorTypes: TOOL_RETRY.nonRetryableErrorTypes },
};

/** Room beyond a tool's own timeout for the activity around it (sandbox start, reading output). */
export const TOOL_TIMEOUT_MARGIN_MS = 30_000;
/** Tool activities heartbeat every few seconds: a worker killed mid-call is noticed this fast. */
export const TOOL_HEARTBEAT = '10 seconds';

/** Reading a session's MCP tool list back from the store (a set carried by reference). */
export function loadMcpToolsActivity(): Activities['loadMcpTools'] {
  return proxyActivities<Activities>(STORE_ACTIVITY).loadMcpTools;
}

/** Listing a server's tools again is bounded by its own startup timeout; this covers the slowest. */
export function discoverActivity(servers: readonly { startupTimeoutMs: number }[]): Activities['discoverMcpTools'] {
  const slowest = Math.max(1_000, ...servers.map((s) => s.startupTimeoutMs));
  return proxyActivities<Activities>({
    startToCloseTimeout: slowest + TOOL_TIMEOUT_MARGIN_MS,
    heartbeatTimeout: TOOL_HEARTBEAT,
    retry: { maximumAttempts: 2, initialInterval: '1s' },
  }).discoverMcpTools;
}
