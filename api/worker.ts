/**
 * `createHarnessWorker`: a harness worker in your own process, with your tools. It serves the
 * same workflows and built-in tools as `harness worker`, with the same defaults from the
 * environment (TEMPORAL_ADDRESS or the embedded server's port, HARNESS_TASK_QUEUE, HARNESS_HOME,
 * DATABASE_URL, model keys), and the tools given here besides. Sessions started on its task
 * queue record the tools when they start (their first turn), so every turn and replay sees the
 * same list; keep every worker of one task queue on the same tools and agents.
 */
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { HarnessTool } from '../deterministic/custom-tools';
import { UsageError, UserError } from '../machine/errors';
import { connectWorker } from '../client/temporal';
import { type TemporalSettings } from '../client/temporal-settings';
import { writeErrLine } from '../machine/terminal/write';
import { TUNING_VARIABLES, tuningProblems, workerTuning, type WorkerTuning } from '../workers/tuning';
import type { DeclarationOptions } from '../workers/declarations';
import { assembleWorker } from '../workers/assemble';

/**
 * What createHarnessWorker takes; everything but `tools` and `agents` has a default from the
 * environment. What runs on this host outside the sandbox is declared here (or in the worker's
 * config file): MCP servers, model endpoints, skills folders, private hosts, agents. Sessions only
 * name it.
 */
export interface HarnessWorkerOptions extends DeclarationOptions {
  /** Tools made with defineTool. */
  tools?: readonly HarnessTool[];
  /** Per tool name, the values that tool's ctx.secrets holds; no tool gets the worker's environment otherwise. */
  secrets?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Where settings are read from (default process.env): TEMPORAL_*, HARNESS_*, DATABASE_URL, OPENAI_API_KEY … */
  env?: NodeJS.ProcessEnv;
  /** The task queue to poll (default HARNESS_TASK_QUEUE, else `harness`). */
  taskQueue?: string;
  /** Workspaces, records and the embedded database live here (default HARNESS_HOME, else the project's folder under ~/.local/state/harness); a folder with content the harness did not mark as this user's is refused. */
  home?: string;
  /** Where the worker says what it does, one line at a time (default: standard error, escaped). */
  log?: (line: string) => void;
  /** Store model replies' text as it arrives in the database (DATABASE_URL, else the embedded one), where `events()` (model_text_delta), `harness run` and `status --follow` show it on any machine (default: unless HARNESS_STREAM=0). */
  streamText?: boolean;
  /**
   * Slots, workflow cache, sticky queue timeout and drain grace, over what the environment says
   * (HARNESS_WORKFLOW_SLOTS, HARNESS_ACTIVITY_SLOTS, HARNESS_LOCAL_ACTIVITY_SLOTS,
   * HARNESS_WORKFLOW_CACHE, HARNESS_REUSE_V8_CONTEXT, HARNESS_STICKY_TIMEOUT_MS,
   * HARNESS_DRAIN_GRACE_SEC); see docs/worker-tuning.md. A bad value throws a UsageError naming it.
   */
  tuning?: Partial<WorkerTuning>;
  /** @internal The workflow bundle (tests bundle the sources; default dist/workflow-bundle.js). */
  bundlePath?: string;
  /** Serve as this sandbox host (default HARNESS_HOST_ID): also poll its task queue, where the sessions it hosts send their sandbox calls. */
  hostId?: string;
}

/** A worker ready to poll. */
export interface HarnessWorker {
  readonly taskQueue: string;
  /** The Temporal server it polls (`host:port`). */
  readonly address: string;
  readonly home: string;
  /** The names of its custom tools (its agents' among them). */
  readonly tools: readonly string[];
  /** The names of the agents sessions may run as (defineAgent's, and its config file's). */
  readonly agents: readonly string[];
  /**
   * Polls until shutdown() (or SIGINT/SIGTERM), drains (calls in flight get the drain grace,
   * then are cancelled; sandbox containers are kept), then closes what it opened.
   */
  run(): Promise<void>;
  /** Stops polling; run() resolves once calls in flight are done, or cancelled after the drain grace. */
  shutdown(): void;
  /** The Temporal SDK worker underneath, the one running workflows (advanced: its state, metrics). */
  readonly worker: Worker;
}

/**
 * Creates a worker with your tools and agents (not polling yet: call run()); a bad tool
 * definition, or two tools of one name, throws before anything connects. It is the worker
 * `harness worker` runs (workers/assemble.ts), with the same sweeps: sandboxes of ended sessions
 * removed and idle ones stopped (HARNESS_SANDBOX_SWEEP_SEC, HARNESS_SANDBOX_IDLE_SEC), MCP servers
 * of gone workers stopped.
 */
export async function createHarnessWorker(opts: HarnessWorkerOptions = {}): Promise<HarnessWorker> {
  const env: NodeJS.ProcessEnv = {
    ...(opts.env ?? process.env),
    ...(opts.taskQueue ? { HARNESS_TASK_QUEUE: opts.taskQueue } : {}),
    ...(opts.home ? { HARNESS_HOME: opts.home } : {}),
  };
  const log = opts.log ?? writeErrLine;
  const tools = opts.tools ?? [];
  const tuning = tuningOf(env, opts.tuning);
  const assembled = await assembleWorker({
    env,
    log,
    tuning,
    connect,
    // The declarations are fields of the options themselves (DeclarationOptions).
    declared: opts,
    tools,
    ...(opts.secrets ? { secrets: opts.secrets } : {}),
    ...(opts.streamText !== undefined ? { streamText: opts.streamText } : {}),
    ...(opts.bundlePath ? { bundlePath: opts.bundlePath } : {}),
    ...(opts.hostId ? { hostId: opts.hostId } : {}),
  });
  if (assembled === 'stopped') throw new UserError('stopped while waiting for the message store');
  return {
    taskQueue: assembled.settings.taskQueue,
    address: assembled.settings.address,
    home: assembled.home,
    tools: assembled.tools,
    agents: assembled.agents,
    worker: assembled.workers.main,
    run: () => assembled.run(),
    shutdown: () => assembled.shutdown(),
  };
}

/** The tuning from the environment with the given settings over it; a bad value of either throws naming it. */
function tuningOf(env: NodeJS.ProcessEnv, given: Partial<WorkerTuning> | undefined): WorkerTuning {
  const fromEnv = workerTuning(env);
  const set = Object.fromEntries(Object.entries(given ?? {}).filter(([, v]) => v !== undefined)) as Partial<WorkerTuning>;
  const tuning = { ...fromEnv.tuning, ...set };
  // Checked together: slots given here may disagree with a cache from the environment.
  const combined = tuningProblems(tuning, (key) => (key in set ? `tuning.${key}` : TUNING_VARIABLES[key]));
  const problems = [...fromEnv.problems, ...combined.problems];
  if (problems.length) throw new UsageError(problems.join('; '), 'see docs/worker-tuning.md for each setting and its default');
  return tuning;
}

/** The worker's connection, or one line saying Temporal cannot be reached and how to get one. */
async function connect(s: TemporalSettings): Promise<NativeConnection> {
  try {
    return await connectWorker(s);
  } catch (err) {
    throw new UserError(
      `cannot reach Temporal at ${s.address}: ${(err as Error).message.split('\n')[0]}`,
      s.embedded ? 'start the embedded server with `npx harness dev` (or set TEMPORAL_ADDRESS)' : 'check TEMPORAL_ADDRESS and that the server runs',
    );
  }
}
