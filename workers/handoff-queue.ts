/**
 * A worker's hand-off queue. A model call slower than the local-activity window is handed on
 * (workflows/turn/model-call.ts): its request goes on in this process (activities/model/handoffs.ts)
 * and the callModel activity that waits for the reply must run here, or another worker sends the
 * request again and both are paid for. So each harness worker also polls a task queue of its own,
 * activities only, that no other worker shares; the local outcome names it and the workflow
 * schedules the activity there, for a few seconds (when this worker is gone the call is sent
 * again from the shared queue).
 *
 * The queue is named after the worker's shared queue and a fresh id per worker: a restarted
 * worker holds no call of its predecessor's, so it must not poll that queue either.
 */
import { randomUUID } from 'node:crypto';
import type { Worker, WorkerOptions } from '@temporalio/worker';
import { WatchedWorker } from './workflow-threads';

/** A new hand-off queue for one worker of `taskQueue`. */
export function handoffQueueOf(taskQueue: string): string {
  return `${taskQueue}/handoff-${randomUUID()}`;
}

/**
 * The Worker that polls `queue`: the same activities, connection and tuning as the worker's
 * main one (its own slots, so a worker busy with other activities still takes its hand-offs).
 */
export function createHandoffWorker(options: Omit<WorkerOptions, 'taskQueue' | 'workflowBundle' | 'workflowsPath'>, queue: string): Promise<Worker> {
  // One poll at a time: the queue sees a task only when a call is handed on, and every poll held
  // open is work for the server the other queues share (five, the SDK's default, showed in bench:step).
  return WatchedWorker.create({ ...options, taskQueue: queue, maxConcurrentActivityTaskPolls: 1 });
}
