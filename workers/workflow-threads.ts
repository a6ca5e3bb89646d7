/**
 * The workflow threads of a harness Worker: the SDK's own thread code and V8 contexts, with two
 * costs it pays on every call into workflow code replaced. Measured by bench:step (a 50-step
 * turn): together they were about half of a workflow task's CPU.
 *
 * - The deadlock guard. The SDK passes vm's `timeout` on each call into the workflow context, and
 *   Node starts and joins a watchdog thread for each such call (several a workflow task). Here the
 *   main thread watches each workflow thread instead: a thread that has work and has answered
 *   nothing for the same limit (isolateExecutionTimeout, 5 s) is terminated, which V8 does even
 *   inside a tight loop. Its pending activations fail with WorkflowThreadStuckError, so the server
 *   retries their tasks, as after the SDK's own guard; a fresh thread takes its place. Unlike an
 *   UnexpectedError, this error does not shut the Worker down.
 * - The stack-trace promise hook. It records a source-mapped stack for every promise workflow code
 *   creates, used only by the `__stack_trace` query. Off unless HARNESS_WORKFLOW_STACK_TRACES=1.
 *
 * The only file that reaches into the SDK's private modules (`@temporalio/worker/lib/…`), read
 * against @temporalio/worker 1.24.0: test/workers/workflow-threads-sdk.test.ts fails on another
 * version, on a second file reaching in, or when what is relied on here changes. Kept because with
 * a model answering after a second, 12 sessions at once (bench:step:realistic), the worker still
 * spent 1.09–1.41x the CPU a step with the SDK's threads (docs/benchmarks.md).
 */
import { Worker as NodeWorker } from 'node:worker_threads';
import type { Logger } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import type { CompiledWorkerOptions } from '@temporalio/worker/lib/worker-options';
import type { Workflow, WorkflowCreateOptions, WorkflowCreator } from '@temporalio/worker/lib/workflow/interface';
import { VMWorkflowThreadProxy, WorkerThreadClient } from '@temporalio/worker/lib/workflow/threaded-vm';
import type { WorkflowBundleWithSourceMapAndFilename, WorkerThreadInput } from '@temporalio/worker/lib/workflow/workflow-worker-thread/input';
import type { WorkerThreadOutput } from '@temporalio/worker/lib/workflow/workflow-worker-thread/output';

/** A workflow thread ran past the limit without answering; it was terminated and replaced. */
export class WorkflowThreadStuckError extends Error {
  override name = 'WorkflowThreadStuckError';
}

/** Whether workflow threads record promise stacks for the `__stack_trace` query. */
export function stackTracesWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.HARNESS_WORKFLOW_STACK_TRACES === '1';
}

// Runs first in each workflow thread. Marking the SDK's global handlers installed, after setting
// the source-mapped Error.prepareStackTrace they also set, keeps the promise hook out.
const THREAD_ENTRY = `
const { workerData } = require('node:worker_threads');
if (!workerData.stackTraces) {
  const { globalHandlers } = require(workerData.vmShared);
  globalHandlers.overridePrepareStackTrace();
  globalHandlers.installed = true;
}
require(workerData.threadScript);
`;

interface ThreadSetup {
  bundle: WorkflowBundleWithSourceMapAndFilename;
  reuseV8Context: boolean;
  registeredActivityNames: Set<string>;
  logger: Logger;
  patchActivationCallback?: CompiledWorkerOptions['patchActivationCallback'];
  limitMs: number;
  stackTraces: boolean;
}

/** What a watch needs of the SDK's thread client. */
export type ThreadClient = Pick<WorkerThreadClient, 'send' | 'getActiveWorkflowCount' | 'destroy'>;

/** What a watch needs of the setup: the limit, and where to log a kill. */
interface WatchSetup {
  limitMs: number;
  logger: Pick<Logger, 'error'>;
}

/** One workflow thread and its watch: requests in flight, and when it last answered. */
export class WatchedThread {
  private pending = 0;
  private lastAnswer = Date.now();
  private stuck = false;
  private confirming = false;
  private readonly watch: NodeJS.Timeout;

  private constructor(
    private readonly thread: Pick<NodeWorker, 'terminate'>,
    private readonly client: ThreadClient,
    private readonly setup: WatchSetup,
  ) {
    this.watch = setInterval(() => this.check(), Math.max(50, Math.floor(setup.limitMs / 5)));
    this.watch.unref();
  }

  /** Watches a thread already running (start() makes the SDK's; tests bring their own). */
  static watching(thread: Pick<NodeWorker, 'terminate'>, client: ThreadClient, setup: WatchSetup): WatchedThread {
    return new WatchedThread(thread, client, setup);
  }

  static async start(setup: ThreadSetup): Promise<WatchedThread> {
    const thread = new NodeWorker(THREAD_ENTRY, {
      eval: true,
      workerData: {
        stackTraces: setup.stackTraces,
        vmShared: require.resolve('@temporalio/worker/lib/workflow/vm-shared'),
        threadScript: require.resolve('@temporalio/worker/lib/workflow/workflow-worker-thread'),
      },
    });
    const client = new WorkerThreadClient(thread, setup.logger, setup.patchActivationCallback);
    const watched = WatchedThread.watching(thread, client, setup);
    // Unwatched: evaluating the bundle may take long on a loaded machine.
    await client.send({
      type: 'init',
      workflowBundle: setup.bundle,
      // No vm timeout: no watchdog thread per call (the watch above stands in for it).
      isolateExecutionTimeoutMs: undefined as unknown as number,
      reuseV8Context: setup.reuseV8Context,
      registeredActivityNames: setup.registeredActivityNames,
      hasPatchActivationCallback: setup.patchActivationCallback !== undefined,
    });
    return watched;
  }

  get alive(): boolean {
    return !this.stuck;
  }

  get workflows(): number {
    return this.client.getActiveWorkflowCount();
  }

  /** What VMWorkflowThreadProxy calls: the SDK client's send, watched. */
  async send(input: WorkerThreadInput): Promise<WorkerThreadOutput> {
    if (this.stuck) throw this.stuckError();
    if (this.pending++ === 0) this.lastAnswer = Date.now();
    try {
      return await this.client.send(input);
    } catch (err) {
      // After our terminate the SDK rejects with UnexpectedError, which would stop the Worker.
      throw this.stuck ? this.stuckError() : err;
    } finally {
      this.pending--;
      this.lastAnswer = Date.now();
    }
  }

  private overdue(): boolean {
    return !this.stuck && this.pending > 0 && Date.now() - this.lastAnswer >= this.setup.limitMs;
  }

  private check(): void {
    if (!this.overdue() || this.confirming) return;
    // The answer may already wait in the port: a main thread that was busy itself (a long
    // synchronous call, a GC pause) runs its due timers before it reads the thread's messages.
    // setImmediate runs after the poll phase that delivers them, so only a thread that really
    // has not answered is terminated.
    this.confirming = true;
    setImmediate(() => {
      this.confirming = false;
      if (!this.overdue()) return;
      this.stuck = true;
      clearInterval(this.watch);
      this.setup.logger.error(`Workflow thread stuck: no answer in ${this.setup.limitMs} ms; terminating and replacing it`);
      void this.thread.terminate();
    });
  }

  private stuckError(): WorkflowThreadStuckError {
    return new WorkflowThreadStuckError(
      `Potential deadlock detected: workflow code ran ${this.setup.limitMs} ms without yielding; its thread was restarted`,
    );
  }

  async destroy(): Promise<void> {
    clearInterval(this.watch);
    if (this.stuck) return;
    await this.client.destroy();
  }
}

/** The SDK's threaded creator, with watched threads; a stuck one is replaced before the next workflow lands. */
class WatchedThreadsCreator implements WorkflowCreator {
  private constructor(
    private readonly threads: WatchedThread[],
    private readonly setup: ThreadSetup,
  ) {}

  static async create(size: number, setup: ThreadSetup): Promise<WatchedThreadsCreator> {
    const threads = await Promise.all(Array.from({ length: size }, () => WatchedThread.start(setup)));
    return new WatchedThreadsCreator(threads, setup);
  }

  async createWorkflow(options: WorkflowCreateOptions): Promise<Workflow> {
    for (let i = 0; i < this.threads.length; i++) {
      if (!this.threads[i]!.alive) this.threads[i] = await WatchedThread.start(this.setup);
    }
    const least = this.threads.reduce((a, b) => (b.workflows < a.workflows ? b : a));
    // The proxy only calls send(); a watched thread answers it.
    return VMWorkflowThreadProxy.create(least as unknown as WorkerThreadClient, options);
  }

  async destroy(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.destroy()));
  }
}

/** Whether to keep the SDK's own workflow threads (HARNESS_WORKFLOW_THREADS=sdk: its vm watchdog and hook). */
function sdkThreadsWanted(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.HARNESS_WORKFLOW_THREADS === 'sdk';
}

/** A Temporal Worker whose workflow threads are watched as above (debug mode keeps the SDK's). */
export class WatchedWorker extends Worker {
  protected static override async createWorkflowCreator(
    bundle: WorkflowBundleWithSourceMapAndFilename,
    compiled: CompiledWorkerOptions,
    logger: Logger,
  ): Promise<WorkflowCreator> {
    if (compiled.debugMode || sdkThreadsWanted()) return super.createWorkflowCreator(bundle, compiled, logger);
    return WatchedThreadsCreator.create(compiled.workflowThreadPoolSize, {
      bundle,
      reuseV8Context: compiled.reuseV8Context ?? true,
      registeredActivityNames: new Set(compiled.activities.keys()),
      logger,
      ...(compiled.patchActivationCallback ? { patchActivationCallback: compiled.patchActivationCallback } : {}),
      limitMs: compiled.isolateExecutionTimeoutMs,
      stackTraces: stackTracesWanted(),
    });
  }
}
