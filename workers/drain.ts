/**
 * A worker's drain, as its operator sees it. Shutdown itself is the Temporal SDK's: its runtime
 * calls Worker.shutdown() on SIGINT/SIGTERM (SIGQUIT, SIGUSR2), the worker stops polling at once,
 * activities in flight run on for the grace (shutdownGraceTime) and are cancelled after it, and
 * run() resolves once nothing is left (workers/tuning.ts sets both bounds). This module only says
 * so: one line when the drain begins, naming what it waits for, and one when it is over. A second
 * signal is not caught (the SDK stops listening after the first): it ends the process at once.
 */
import { GracefulShutdownPeriodExpiredError, type ActivityInterceptorsFactory, type Worker } from '@temporalio/worker';
import type { Info } from '@temporalio/activity';
import { DRAIN_CANCEL_MARGIN_MS } from './tuning';

/** The activities running on a worker, named for the drain's lines (its activity interceptor). */
export class InFlightActivities {
  private readonly running = new Map<number, string>();
  private started = 0;
  private ended = 0;

  /** Goes into Worker.create's `interceptors.activity`. */
  readonly interceptor: ActivityInterceptorsFactory = (ctx) => ({
    inbound: {
      execute: async (input, next) => {
        const id = this.started++;
        this.running.set(id, describeActivity(ctx.info, input.args));
        try {
          return await next(input);
        } finally {
          this.running.delete(id);
          this.ended++;
        }
      },
    },
  });

  /** What runs now: `run_shell (s-1/turn-1, call t1-s1-c0)`, `callModel (s-1/turn-2)`. */
  list(): string[] {
    return [...this.running.values()];
  }

  /** How many activities have ended so far. */
  get endedCount(): number {
    return this.ended;
  }
}

/** One activity in words: the tool of an executeTool, else the activity type; then its workflow. */
export function describeActivity(info: Pick<Info, 'activityType' | 'isLocal' | 'workflowExecution'>, args: readonly unknown[]): string {
  const input = args[0] as { name?: unknown; callId?: unknown } | undefined;
  const tool = info.activityType === 'executeTool' && typeof input?.name === 'string' ? input.name : undefined;
  const where = [info.workflowExecution?.workflowId, tool && typeof input?.callId === 'string' ? `call ${input.callId}` : undefined, info.isLocal ? 'local' : undefined].filter(Boolean);
  return `${tool ?? info.activityType}${where.length ? ` (${where.join(', ')})` : ''}`;
}

interface DrainOptions {
  inFlight: InFlightActivities;
  graceMs: number;
  taskQueue: string;
  log: (line: string) => void;
}

/**
 * Awaits a worker's run() (`running`) and tells its drain: the line when shutdown begins (seen
 * within 50 ms), the line when it is over. A drain cut short by the SDK's force time (an activity
 * that did not stop when cancelled) is told and resolves: Temporal retries that activity on another
 * worker once its heartbeats stop. Any other failure of run() is rethrown.
 */
export async function runDraining(worker: Pick<Worker, 'getState'>, running: Promise<void>, o: DrainOptions): Promise<void> {
  let began: { at: number; ended: number; waitedFor: string[] } | undefined;
  let cutShort: string[] | undefined;
  let graceTimer: NodeJS.Timeout | undefined;
  const begin = () => {
    if (began) return;
    began = { at: Date.now(), ended: o.inFlight.endedCount, waitedFor: o.inFlight.list() };
    o.log(drainingLine(o, began.waitedFor));
    // What is still running when the grace is over is what the SDK cancels.
    graceTimer = setTimeout(() => (cutShort = o.inFlight.list()), o.graceMs);
    graceTimer.unref();
  };
  const watch = setInterval(() => {
    // STOPPED too: a sandbox host's worker has a second Worker (its host queue's), and the main
    // one, with nothing in flight, can be through its whole drain between two looks while the
    // host's activities still run; run() is not over before they are.
    const state = worker.getState();
    if (state === 'STOPPING' || state === 'DRAINING' || state === 'DRAINED' || state === 'STOPPED') begin();
  }, 50);
  watch.unref();
  let forced = false;
  try {
    await running;
  } catch (err) {
    // Past the force time the SDK fails run() with GracefulShutdownPeriodExpiredError, or with
    // what finalizing a worker whose activity still runs throws over it ("Worker still in use").
    const pastForceTime = began !== undefined && Date.now() - began.at >= o.graceMs + DRAIN_CANCEL_MARGIN_MS - 100;
    if (!(err instanceof GracefulShutdownPeriodExpiredError) && !pastForceTime) throw err;
    forced = true;
  } finally {
    clearInterval(watch);
    if (graceTimer) clearTimeout(graceTimer);
  }
  begin(); // a drain over before the first look still gets its line
  const b = began!;
  const secs = ((Date.now() - b.at) / 1000).toFixed(1);
  const kept = 'sandbox containers are kept for the next worker';
  if (forced) {
    const left = o.inFlight.list();
    o.log(
      `worker stopped ${secs} s into its drain: ${count(left.length)} did not end when cancelled after the ${o.graceMs / 1000} s grace (${left.join('; ')}); ` +
        `Temporal retries ${left.length === 1 ? 'it' : 'them'} on another worker once ${left.length === 1 ? 'its' : 'their'} heartbeats stop; ${kept}`,
    );
  } else if (cutShort?.length) {
    o.log(`worker drained in ${secs} s: the ${o.graceMs / 1000} s grace ran out and ${count(cutShort.length)} still running ${cutShort.length === 1 ? 'was' : 'were'} cancelled, to be retried by another worker (${cutShort.join('; ')}); ${kept}`);
  } else {
    o.log(`worker drained in ${secs} s: ${count(o.inFlight.endedCount - b.ended)} finished, none cut short; ${kept}`);
  }
}

/** The line when a drain begins. */
export function drainingLine(o: Pick<DrainOptions, 'graceMs' | 'taskQueue'>, waitedFor: readonly string[]): string {
  const what = waitedFor.length ? `waiting up to ${o.graceMs / 1000} s for ${count(waitedFor.length)} in flight to finish: ${waitedFor.join('; ')}` : 'no activity in flight';
  return `worker draining: stopped polling task queue ${o.taskQueue}; ${what}`;
}

const count = (n: number) => `${n} ${n === 1 ? 'activity' : 'activities'}`;
