/**
 * Builds a harness worker: the workflows (prebundled when available) and the activities; with a
 * host id, also a second Worker polling that sandbox host's own task queue with the same
 * activities (deterministic/host.ts), so the sessions it hosts find their sandbox here; and always a
 * Worker polling a queue of its own, where its handed-on model calls come back (handoff-queue.ts).
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker, type NativeConnection, type State, type WorkerOptions } from '@temporalio/worker';
import { hostQueueOf } from '../deterministic/host';
import { createActivities, type ActivityDeps } from '../activities';
import { workflowBundlePath } from '../machine/paths';
import { bundledAtStart } from '../machine/workflow-bundle';
import { DEFAULT_TUNING, tuningOptions, type WorkerTuning } from './tuning';
import type { InFlightActivities } from './drain';
import { WatchedWorker } from './workflow-threads';
import { createHandoffWorker, handoffQueueOf } from './handoff-queue';


/** What a harness worker needs. */
interface HarnessWorkerOptions extends ActivityDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** A prebuilt bundle; defaults to dist/workflow-bundle.js, else bundles the sources at start. */
  bundlePath?: string;
  /** Slots, cache, sticky timeout, drain grace (workers/tuning.ts; default DEFAULT_TUNING). */
  tuning?: WorkerTuning;
  /** Keeps count of the activities running, for the drain's lines (workers/drain.ts). */
  inFlight?: InFlightActivities;
  /** Serve as sandbox host `hostId` (HARNESS_HOST_ID): also poll its task queue. */
  hostId?: string;
}

/** The Workers of one harness worker: the main one (workflows and activities), its host's and its hand-off queue's, run and stopped together. */
export class HarnessWorkers {
  constructor(
    readonly main: Worker,
    readonly host?: Worker,
    /** Polls the worker's own hand-off queue (workers/handoff-queue.ts). */
    readonly handoff?: Worker,
  ) {}

  /** The Workers that run beside the main one. */
  private get others(): Worker[] {
    return [this.host, this.handoff].filter((w): w is Worker => w !== undefined);
  }

  /** Runs them until shut down (the SDK shuts each down on SIGINT/SIGTERM); one failing stops the others. */
  async run(): Promise<void> {
    const runs = [this.main.run(), ...this.others.map((w) => w.run())];
    try {
      await Promise.all(runs);
    } catch (err) {
      this.shutdown();
      await Promise.allSettled(runs);
      throw err;
    }
  }

  /** Runs them until `work` settles, then stops them. */
  async runUntil<T>(work: Promise<T> | (() => Promise<T>)): Promise<T> {
    const others = this.others.map((w) => ({ w, run: w.run() }));
    try {
      return await this.main.runUntil(work);
    } finally {
      for (const { w } of others) if (w.getState() === 'RUNNING') w.shutdown();
      await Promise.all(others.map((o) => o.run));
    }
  }

  /** The main Worker's state (the host's follows it). */
  getState(): State {
    return this.main.getState();
  }

  /** Starts the shutdown of each (each drains as its tuning says). */
  shutdown(): void {
    for (const w of [this.main, ...this.others]) if (w.getState() === 'RUNNING') w.shutdown();
  }
}

/** Creates (but does not run) a worker serving sessions, turns and their activities. */
export async function createHarnessWorker(opts: HarnessWorkerOptions): Promise<HarnessWorkers> {
  const { connection, namespace, taskQueue, bundlePath, tuning, inFlight, hostId, ...deps } = opts;
  const bundle = bundlePath ?? workflowBundlePath();
  const host = hostId ? { id: hostId, queue: hostQueueOf(taskQueue, hostId) } : undefined;
  const handoffQueue = handoffQueueOf(taskQueue);
  const activities = createActivities({ ...deps, ...(host ? { host } : {}), handoffQueue });
  const common: Omit<WorkerOptions, 'taskQueue'> = {
    connection,
    namespace,
    activities,
    // The SDK sends heartbeats at most every 0.8 × the heartbeat timeout: with a timeout of 5 s
    // (model calls) that left a second between the last beat the server saw and a false
    // "worker lost" under load. Activities beat every third of their timeout; this sends each.
    maxHeartbeatThrottleInterval: '1s',
    // Slots, cache, V8 contexts, the sticky queue timeout (3 s) and the drain on shutdown.
    ...tuningOptions(tuning ?? DEFAULT_TUNING),
    ...(inFlight ? { interceptors: { activity: [inFlight.interceptor] } } : {}),
  };
  // Workflow threads without the SDK's per-call watchdog and promise hook (workers/workflow-threads.ts).
  const main = await WatchedWorker.create({
    ...common,
    taskQueue,
    ...(existsSync(bundle) ? { workflowBundle: { codePath: bundle } } : bundledAtStart()),
  });
  // The host's queue: activities only, the same ones (one sandbox pool, one MCP pool per host).
  return new HarnessWorkers(main, host ? await WatchedWorker.create({ ...common, taskQueue: host.queue }) : undefined, await createHandoffWorker(common, handoffQueue));
}

/** Resolves once the worker polls (true), or its run ended first (false; `running` reports why). */
export async function untilRunning(worker: Pick<HarnessWorkers, 'getState'>, running: Promise<void>): Promise<boolean> {
  let ended = false;
  void running.finally(() => (ended = true)).catch(() => undefined);
  while (!ended && worker.getState() !== 'RUNNING') await sleep(50);
  return !ended;
}
