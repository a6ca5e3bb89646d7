/** Builds a harness worker: the workflows (prebundled when available) and the activities. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker, type NativeConnection } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities';
import { projectRoot } from '../lib/paths';

/** Path of the workflow bundle written by `npm run build`. */
export function workflowBundlePath(): string {
  return path.join(projectRoot(), 'dist', 'workflow-bundle.js');
}

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
  const bundle = bundlePath ?? workflowBundlePath();
  return Worker.create({
    connection,
    namespace,
    taskQueue,
    ...(existsSync(bundle)
      ? { workflowBundle: { codePath: bundle } }
      : { workflowsPath: require.resolve('../workflows') }),
    activities: createActivities(deps),
  });
}
