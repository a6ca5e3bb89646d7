/** Builds a harness worker: the workflows (prebundled when available) and the activities. */
import { existsSync } from 'node:fs';
import { Worker, type NativeConnection } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';
import { workflowBundlePath } from '../host/paths';

export { workflowBundlePath };
import { sweepStreams } from '../host/model-stream';

/** What a harness worker needs. */
export interface HarnessWorkerOptions extends ActivityDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** A prebuilt bundle; defaults to dist/workflow-bundle.js, else bundles the sources at start. */
  bundlePath?: string;
}

/** Creates (but does not run) a worker serving sessions, turns and their activities. */
export async function createHarnessWorker(opts: HarnessWorkerOptions): Promise<Worker> {
  const { connection, namespace, taskQueue, bundlePath, ...deps } = opts;
  // Streams a killed worker left mid reply (history has those replies whole).
  if (deps.streamText && deps.home) sweepStreams(deps.home);
  const bundle = bundlePath ?? workflowBundlePath();
  return Worker.create({
    connection,
    namespace,
    taskQueue,
    ...(existsSync(bundle)
      ? { workflowBundle: { codePath: bundle } }
      : { workflowsPath: require.resolve('../workflows') }),
    activities: createActivities(deps),
    // The SDK sends heartbeats at most every 0.8 × the heartbeat timeout: with a timeout of 5 s
    // (model calls) that left a second between the last beat the server saw and a false
    // "worker lost" under load. Activities beat every third of their timeout; this sends each.
    maxHeartbeatThrottleInterval: '1s',
    // A workflow's next task goes to the worker that ran its last one (its sticky queue) while
    // that worker polled within the last 10 s; a killed worker's tasks then sat there for the
    // SDK's default 10 s before any other worker could take them. A live worker starts its
    // sticky task at once (its poll is waiting for it); one that does not within 3 s has the
    // task moved to the shared queue, where it is replayed from history.
    stickyQueueScheduleToStartTimeout: '3s',
  });
}
