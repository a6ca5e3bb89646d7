/**
 * How a harness worker is sized and how it stops: its task slots, workflow cache, V8 context
 * model, sticky queue timeout and drain grace, read from the environment in one place, checked,
 * and turned into Worker.create options by one function (tuningOptions), so every Worker a
 * process makes is tuned alike. docs/worker-tuning.md says what each setting does and how to size it.
 *
 * A setting left unset keeps the Temporal SDK's default (below), except two the harness chose:
 * the sticky queue timeout (3 s, not 10 s) and the drain grace (30 s, not 0).
 */
import type { WorkerOptions } from '@temporalio/worker';

/** A worker's tuning; `undefined` means the SDK's default. */
export interface WorkerTuning {
  /** Workflow tasks run at once (maxConcurrentWorkflowTaskExecutions; SDK default 40). HARNESS_WORKFLOW_SLOTS. */
  workflowSlots?: number | undefined;
  /** Activities run at once: model calls, run_shell, http_request, MCP and custom tools (maxConcurrentActivityTaskExecutions; SDK default 100). HARNESS_ACTIVITY_SLOTS. */
  activitySlots?: number | undefined;
  /** Local activities run at once: the fast file tools (maxConcurrentLocalActivityExecutions; SDK default 100). HARNESS_LOCAL_ACTIVITY_SLOTS. */
  localActivitySlots?: number | undefined;
  /** Workflows kept in memory between their tasks (maxCachedWorkflows; SDK default from the heap limit). 0 or at least 2. HARNESS_WORKFLOW_CACHE. */
  workflowCache?: number | undefined;
  /** One V8 context shared by all workflows (reuseV8Context; SDK default true). HARNESS_REUSE_V8_CONTEXT. */
  reuseV8Context: boolean;
  /** How long a workflow task waits on this worker's sticky queue before any worker may take it (SDK default 10 s). HARNESS_STICKY_TIMEOUT_MS. */
  stickyTimeoutMs: number;
  /** On shutdown, how long activities in flight may run on before they are cancelled (shutdownGraceTime; SDK default 0). HARNESS_DRAIN_GRACE_SEC. */
  drainGraceMs: number;
}

/** The Worker.create options a tuning sets. */
type TunedWorkerOptions = Pick<
  WorkerOptions,
  | 'maxConcurrentWorkflowTaskExecutions'
  | 'maxConcurrentActivityTaskExecutions'
  | 'maxConcurrentLocalActivityExecutions'
  | 'maxCachedWorkflows'
  | 'reuseV8Context'
  | 'stickyQueueScheduleToStartTimeout'
  | 'shutdownGraceTime'
  | 'shutdownForceTime'
>;

/**
 * The defaults. Slots and the cache: the SDK's (40 workflow tasks, 100 activities, 100 local
 * activities, a cache sized from the heap limit: about 600 workflows per GiB over 200 MiB, at
 * least 10), since nothing measured here says otherwise: a session's workflow tasks take
 * milliseconds and its activities mostly wait on a model or a container, so one worker's slots
 * are bounded by what its machine runs in the sandboxes, not by these numbers.
 */
export const DEFAULT_TUNING: Readonly<WorkerTuning> = Object.freeze({
  // The SDK's default and recommendation: in its tests, a third of the memory and half to two
  // thirds of the CPU of a context per workflow.
  reuseV8Context: true,
  // A workflow's next task goes to the worker that ran its last one (its sticky queue) while
  // that worker polled within the last 10 s; a killed worker's tasks then sat there for the
  // SDK's default 10 s before any other worker could take them. A live worker starts its
  // sticky task at once (its poll is waiting for it); one that does not within 3 s has the
  // task moved to the shared queue, where it is replayed from history.
  stickyTimeoutMs: 3_000,
  // The SDK's default 0 cancels activities in flight the moment shutdown begins: a command half
  // run, a model reply half received, each retried by another worker after the cancellation
  // (the reply paid for twice). 30 s lets a typical tool call (run_shell commands take seconds;
  // its default timeout is 60 s) and a model reply (seconds, rarely over 30) finish and be
  // recorded, and stays within what platforms give a stopping process by default (Kubernetes 30 s)
  // plus DRAIN_CANCEL_MARGIN_MS; a longer call is cancelled and retried, never lost.
  drainGraceMs: 30_000,
});

/**
 * After the grace, activities still running are cancelled; those that stop on cancellation (model
 * calls, MCP and custom tools) end within a second. One that does not (a run_shell command runs
 * on in its container) is left to Temporal's retry after this long: the worker exits anyway, at
 * most grace + this margin after shutdown began (the SDK's shutdownForceTime).
 */
export const DRAIN_CANCEL_MARGIN_MS = 5_000;

/** The environment variable of each setting. */
export const TUNING_VARIABLES = {
  workflowSlots: 'HARNESS_WORKFLOW_SLOTS',
  activitySlots: 'HARNESS_ACTIVITY_SLOTS',
  localActivitySlots: 'HARNESS_LOCAL_ACTIVITY_SLOTS',
  workflowCache: 'HARNESS_WORKFLOW_CACHE',
  reuseV8Context: 'HARNESS_REUSE_V8_CONTEXT',
  stickyTimeoutMs: 'HARNESS_STICKY_TIMEOUT_MS',
  drainGraceMs: 'HARNESS_DRAIN_GRACE_SEC',
} as const satisfies Record<keyof WorkerTuning, string>;

// Bounds that catch a unit mistaken (milliseconds for seconds) without refusing a real need.
const MAX_SLOTS = 10_000;
const MAX_CACHE = 100_000;
const MAX_STICKY_MS = 10 * 60_000;
const MAX_GRACE_SEC = 3_600;

/** What workerTuning read: the tuning, its Worker.create options, and one line per bad value. */
interface TuningFromEnv {
  tuning: WorkerTuning;
  options: TunedWorkerOptions;
  problems: string[];
}

/** Reads the tuning from the environment; a bad value is a problem naming its variable (and keeps the default). */
export function workerTuning(env: NodeJS.ProcessEnv): TuningFromEnv {
  const problems: string[] = [];
  const raw = (key: keyof WorkerTuning): string | undefined => {
    const v = env[TUNING_VARIABLES[key]]?.trim();
    return v ? v : undefined;
  };
  const parsed: Partial<WorkerTuning> = {};
  for (const key of ['workflowSlots', 'activitySlots', 'localActivitySlots', 'workflowCache', 'stickyTimeoutMs'] as const) {
    const v = raw(key);
    if (v === undefined) continue;
    if (!/^\d+$/.test(v)) problems.push(`${TUNING_VARIABLES[key]} is ${JSON.stringify(v)}: ${WHOLE[key]}`);
    else parsed[key] = Number(v);
  }
  const reuse = raw('reuseV8Context');
  if (reuse !== undefined) {
    const b = parseBoolean(reuse);
    if (b === undefined) problems.push(`${TUNING_VARIABLES.reuseV8Context} is ${JSON.stringify(reuse)}: give 1 or 0 (true/false, yes/no, on/off)`);
    else parsed.reuseV8Context = b;
  }
  const grace = raw('drainGraceMs');
  if (grace !== undefined) {
    if (!/^\d+(\.\d+)?$/.test(grace) || Number(grace) > MAX_GRACE_SEC) problems.push(`${TUNING_VARIABLES.drainGraceMs} is ${JSON.stringify(grace)}: give seconds, a number from 0 to ${MAX_GRACE_SEC} (e.g. 30)`);
    else parsed.drainGraceMs = Math.round(Number(grace) * 1000);
  }
  // Range checks on what parsed, named by variable; a bad value falls back to the default.
  const ranged = tuningProblems({ ...DEFAULT_TUNING, ...parsed }, (key) => TUNING_VARIABLES[key]);
  problems.push(...ranged.problems);
  const tuning = { ...DEFAULT_TUNING, ...parsed };
  for (const key of ranged.bad) tuning[key] = DEFAULT_TUNING[key] as never;
  return { tuning, options: tuningOptions(tuning), problems };
}

const WHOLE: Record<'workflowSlots' | 'activitySlots' | 'localActivitySlots' | 'workflowCache' | 'stickyTimeoutMs', string> = {
  workflowSlots: `give a whole number from 2 to ${MAX_SLOTS} (the SDK's default is 40)`,
  activitySlots: `give a whole number from 1 to ${MAX_SLOTS} (the SDK's default is 100)`,
  localActivitySlots: `give a whole number from 1 to ${MAX_SLOTS} (the SDK's default is 100)`,
  workflowCache: `give a whole number: 0 (no cache) or from 2 to ${MAX_CACHE}`,
  stickyTimeoutMs: `give milliseconds, a whole number from 100 to ${MAX_STICKY_MS} (default 3000)`,
};

/**
 * The problems of a tuning (from the environment or given in code), each naming the setting
 * through `name`, and the settings that are bad.
 */
export function tuningProblems(t: Partial<WorkerTuning>, name: (key: keyof WorkerTuning) => string): { problems: string[]; bad: (keyof WorkerTuning)[] } {
  const problems: string[] = [];
  const bad: (keyof WorkerTuning)[] = [];
  const check = (key: keyof WorkerTuning, ok: boolean, why: string) => {
    if (ok) return;
    problems.push(`${name(key)} is ${JSON.stringify(t[key]) ?? String(t[key])}: ${why}`);
    bad.push(key);
  };
  const int = (v: unknown, min: number, max: number) => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
  if (t.workflowSlots !== undefined) check('workflowSlots', int(t.workflowSlots, 2, MAX_SLOTS), WHOLE.workflowSlots);
  if (t.activitySlots !== undefined) check('activitySlots', int(t.activitySlots, 1, MAX_SLOTS), WHOLE.activitySlots);
  if (t.localActivitySlots !== undefined) check('localActivitySlots', int(t.localActivitySlots, 1, MAX_SLOTS), WHOLE.localActivitySlots);
  if (t.workflowCache !== undefined) check('workflowCache', t.workflowCache === 0 || int(t.workflowCache, 2, MAX_CACHE), WHOLE.workflowCache);
  if (t.reuseV8Context !== undefined) check('reuseV8Context', typeof t.reuseV8Context === 'boolean', 'give true or false');
  if (t.stickyTimeoutMs !== undefined) check('stickyTimeoutMs', int(t.stickyTimeoutMs, 100, MAX_STICKY_MS), WHOLE.stickyTimeoutMs);
  if (t.drainGraceMs !== undefined) {
    check('drainGraceMs', int(t.drainGraceMs, 0, MAX_GRACE_SEC * 1000), `give milliseconds, a whole number from 0 to ${MAX_GRACE_SEC * 1000} (default 30000)`);
  }
  // The SDK would quietly lower the slots to the cache size (a workflow task needs its workflow cached).
  if (!bad.includes('workflowSlots') && !bad.includes('workflowCache') && t.workflowSlots !== undefined && t.workflowCache !== undefined && t.workflowCache > 0 && t.workflowSlots > t.workflowCache) {
    problems.push(`${name('workflowSlots')} (${t.workflowSlots}) is more than ${name('workflowCache')} (${t.workflowCache}): a workflow task runs a cached workflow, so give at most ${t.workflowCache} slots or a larger cache`);
    bad.push('workflowSlots');
  }
  return { problems, bad };
}

/** The Worker.create options of a tuning: the one place a tuning is applied. */
export function tuningOptions(t: WorkerTuning): TunedWorkerOptions {
  return {
    ...(t.workflowSlots !== undefined ? { maxConcurrentWorkflowTaskExecutions: t.workflowSlots } : {}),
    ...(t.activitySlots !== undefined ? { maxConcurrentActivityTaskExecutions: t.activitySlots } : {}),
    ...(t.localActivitySlots !== undefined ? { maxConcurrentLocalActivityExecutions: t.localActivitySlots } : {}),
    ...(t.workflowCache !== undefined ? { maxCachedWorkflows: t.workflowCache } : {}),
    reuseV8Context: t.reuseV8Context,
    stickyQueueScheduleToStartTimeout: t.stickyTimeoutMs,
    // In flight at shutdown: run on for the grace, then cancelled (the SDK's shutdownGraceTime);
    // the worker ends at the latest DRAIN_CANCEL_MARGIN_MS after that (shutdownForceTime).
    shutdownGraceTime: t.drainGraceMs,
    shutdownForceTime: t.drainGraceMs + DRAIN_CANCEL_MARGIN_MS,
  };
}

/** The settings that differ from the defaults, for the worker's start line (empty when none). */
export function describeTuning(t: WorkerTuning): string {
  const parts: string[] = [];
  if (t.workflowSlots !== undefined) parts.push(`workflow slots ${t.workflowSlots}`);
  if (t.activitySlots !== undefined) parts.push(`activity slots ${t.activitySlots}`);
  if (t.localActivitySlots !== undefined) parts.push(`local activity slots ${t.localActivitySlots}`);
  if (t.workflowCache !== undefined) parts.push(`workflow cache ${t.workflowCache}`);
  if (t.reuseV8Context !== DEFAULT_TUNING.reuseV8Context) parts.push(`reuseV8Context ${t.reuseV8Context}`);
  if (t.stickyTimeoutMs !== DEFAULT_TUNING.stickyTimeoutMs) parts.push(`sticky timeout ${t.stickyTimeoutMs} ms`);
  if (t.drainGraceMs !== DEFAULT_TUNING.drainGraceMs) parts.push(`drain grace ${t.drainGraceMs / 1000} s`);
  return parts.join(', ');
}

function parseBoolean(v: string): boolean | undefined {
  const s = v.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(s)) return true;
  if (['0', 'false', 'no', 'off'].includes(s)) return false;
  return undefined;
}
