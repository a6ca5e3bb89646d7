/**
 * Retention workflows: what a session stored lives on the worker (its HARNESS_HOME and the
 * message store), so clients delete it by running these on the session's task queue.
 * purgeWorkflow purges sessions that are over (`harness sessions prune`, `harness end --purge`
 * of a session that already ended); sessionWorkflow purges itself at its end through
 * purgeAtEnd when `end --purge` asked while it ran. storedSessionsWorkflow lists sessions by
 * their last write to the store, which outlives Temporal's own records of closed workflows.
 */
import { isCancellation, proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import { DEFAULT_HOST_TIMEOUT_MS, type HostRef } from '../../deterministic/host';
import { onSandboxHost, type OnHost } from '../sandbox-host';
import type { createActivities } from '../../activities';
import type { PurgeReport } from '../../activities/store/purge';
import { rootCauseMessage } from '../../deterministic/errors';

export type { PurgeReport };

type Activities = ReturnType<typeof createActivities>;

// Deleting a large workspace takes a while; the activity heartbeats as it goes, so a worker
// that dies is noticed in a minute. A store that is down is retried for about a minute.
const PURGE: ActivityOptions = {
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 5 },
};
const shared = proxyActivities<Activities>(PURGE);

const { storedSessionsIdleSince } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', maximumAttempts: 3 },
});

/** Sessions to purge; each must be over (the client checks with Temporal before it asks). */
interface PurgeInput {
  sessionIds: string[];
  /** The sandbox host each session lived on at its end, as its history says: its workspace is purged there. */
  hosts?: Record<string, HostRef>;
}

/** What a purge did: a report per purged session, a one-line error per session that failed. */
export interface PurgeOutcome {
  purged: PurgeReport[];
  failed: { sessionId: string; error: string }[];
}

/** Purges the sessions one after another; one that fails does not stop the others. */
export async function purgeWorkflow(input: PurgeInput): Promise<PurgeOutcome> {
  const out: PurgeOutcome = { purged: [], failed: [] };
  for (const sessionId of input.sessionIds) {
    const one = await purgeAtEnd(sessionId, input.hosts?.[sessionId]);
    if (one.purged) out.purged.push(one.purged);
    else out.failed.push({ sessionId, error: one.purgeFailed ?? 'unknown failure' });
  }
  return out;
}

/** Lists the sessions whose last write to the message store is older than `before` (an ISO time). */
export async function storedSessionsWorkflow(input: { before: string }): Promise<string[]> {
  return storedSessionsIdleSince({ before: input.before });
}

/** How purging a session at its end went: its report, or why it failed. */
export interface PurgeAtEnd {
  purged?: PurgeReport;
  purgeFailed?: string;
}

/**
 * Purges one session; a failure (after the activity's retries) is returned, never thrown. A
 * session on a sandbox host is purged there (its workspace and container are there); when that
 * host is gone, whichever worker answers purges what the store holds.
 */
export async function purgeAtEnd(sessionId: string, host?: HostRef): Promise<PurgeAtEnd> {
  const purge = (onHost?: OnHost) => (onHost ? proxyActivities<Activities>({ ...PURGE, ...onHost }) : shared).purgeSession({ sessionId });
  try {
    return { purged: await onSandboxHost(host, DEFAULT_HOST_TIMEOUT_MS, purge, () => purge()) };
  } catch (err) {
    if (isCancellation(err)) throw err; // a cancelled purge stops; it is not a failed one
    return { purgeFailed: rootCauseMessage(err) };
  }
}
