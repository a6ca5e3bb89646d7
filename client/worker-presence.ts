/**
 * Whether a worker polls a workflow task queue, from the server's poller records
 * (DescribeTaskQueue): when each worker last started a poll.
 */
import type { Client } from '@temporalio/client';

/**
 * Before sending anything, a poller counts as live when it polled within this window: an idle
 * worker re-polls about once a minute (long polls), Temporal forgets pollers after five
 * minutes, and three minutes also tolerates clock skew between this machine and the server —
 * refusing to send because of a skewed clock would be worse than a late "no worker" line.
 */
const LIVE_POLLER_MS = 3 * 60_000;

/**
 * While waiting, a worker whose last poll began longer ago than this is gone: a live worker's
 * long poll returns within a minute (56–61 s apart, measured on an idle dev server) and it polls
 * again at once. A wrong guess here changes only what the waiting line says.
 */
export const GONE_POLLER_MS = 75_000;

// temporal.api.enums.v1 values (the proto package is not a direct dependency).
const TASK_QUEUE_KIND_NORMAL = 1;
const TASK_QUEUE_TYPE_WORKFLOW = 1;

/** What the server knows of the pollers of a task queue: none on record, or how long ago the newest one polled. */
export type LastPoll = { polled: false } | { polled: true; agoMs: number };

/** When a worker last polled the workflow task queue, or undefined when the server would not say (no permission, trouble). */
export async function lastPoll(client: Client, taskQueue: string, timeoutMs = 5_000): Promise<LastPoll | undefined> {
  try {
    const res = await client.withDeadline(Date.now() + timeoutMs, () =>
      client.workflowService.describeTaskQueue({
        namespace: client.options.namespace,
        taskQueue: { name: taskQueue, kind: TASK_QUEUE_KIND_NORMAL },
        taskQueueType: TASK_QUEUE_TYPE_WORKFLOW,
      }),
    );
    const times = (res.pollers ?? []).flatMap((p) => {
      const t = p.lastAccessTime;
      return t?.seconds === undefined || t.seconds === null ? [] : [Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6)];
    });
    if (!times.length) return { polled: false };
    return { polled: true, agoMs: Math.max(0, Date.now() - Math.max(...times)) };
  } catch {
    return undefined;
  }
}

/** Whether a worker polls the workflow task queue: `unknown` when the server would not say. */
type WorkerPresence = 'present' | 'absent' | 'unknown';

/** Whether any worker polled the workflow task queue within `liveMs`. */
export async function workerPresence(client: Client, taskQueue: string, liveMs = LIVE_POLLER_MS): Promise<WorkerPresence> {
  const seen = await lastPoll(client, taskQueue);
  if (!seen) return 'unknown'; // say nothing rather than guess
  return seen.polled && seen.agoMs < liveMs ? 'present' : 'absent';
}
