/**
 * Follows one workflow id's history as it grows: every run so far, then long polls on the latest
 * run (getWorkflowExecutionHistory with waitNewEvent: the server answers as soon as an event is
 * written), across continue-as-new and `harness retry` resets. History is the source, so a
 * follower that attaches late, or a worker that dies meanwhile, loses no event.
 */
import type { Client } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { workflowRuns } from '../../history/workflow-runs';
import { decodeEvents, type HistoryEvent, type TraceEvent } from '../../history/trace/events';
import { isCloseEvent } from '../../history/trace/close-event';
import { resetBase, type Run } from '../../history/trace/runs';
import { troubleOf, type Trouble } from '../wait-progress';

/** How long one long poll may wait before asking again (the server gives up at about 20 s). */
const LONG_POLL_MS = 30_000;
/** Longest pause between tries while Temporal does not answer. */
const MAX_BACKOFF_MS = 8_000;

/** One run as the follower holds it: raw events (for their ids) and their decoded form. */
interface FollowedRun {
  runId: string;
  raw: HistoryEvent[];
  events: TraceEvent[];
  resetFrom?: string;
  lastId: number;
  /** Where the next long poll goes on from (undefined: from the start). */
  token?: Uint8Array;
  closed: boolean;
}

/** What a poll found: new events, or the workflow id has closed for good. */
export type FollowStep = 'changed' | 'closed';

/** Keeps a workflow id's runs up to date; see the module comment. */
export class HistoryFollower {
  private runs: FollowedRun[] = [];
  private workflowType = '';

  constructor(
    private readonly client: Client,
    readonly workflowId: string,
    private readonly onTrouble: (t: Trouble | undefined) => void = () => undefined,
  ) {}

  /** Loads every run so far; false when Temporal does not know the id. */
  async load(signal?: AbortSignal): Promise<boolean> {
    const raw = await this.retrying(signal, () => workflowRuns(this.client, this.workflowId));
    this.runs = raw.map(({ runId, history }) => this.fromEvents(runId, (history.events ?? []) as HistoryEvent[]));
    const reset = new Set(this.runs.map((r) => r.resetFrom).filter(Boolean));
    // A run that was reset: the run made by the reset holds its history up to the reset point again.
    this.runs = this.runs.filter((r) => !reset.has(r.runId));
    return this.runs.length > 0;
  }

  /** The runs as the trace reads them, oldest first. */
  current(): Run[] {
    return this.runs.map((r) => ({
      workflowId: this.workflowId,
      runId: r.runId,
      workflowType: this.typeOf(r),
      ...(continuedFrom(r) ? { continuedFrom: continuedFrom(r)! } : {}),
      ...(r.resetFrom ? { resetFrom: r.resetFrom } : {}),
      events: r.events,
    }));
  }

  /** True once the latest run closed without a successor. */
  get closed(): boolean {
    const last = this.runs[this.runs.length - 1];
    return !last || (last.closed && !successor(last));
  }

  /** Waits for new events (a long poll); `closed` when nothing more will come. Rejects only when `signal` aborts. */
  async next(signal?: AbortSignal): Promise<FollowStep> {
    for (;;) {
      const last = this.runs[this.runs.length - 1];
      if (!last) return 'closed';
      if (last.closed) {
        const next = successor(last);
        if (next) {
          this.runs.push(this.fromEvents(next, []));
          continue;
        }
        // Closed: a reset (`harness retry`) may have made a newer run since; look once.
        const before = this.runs.map((r) => r.runId).join();
        await this.load(signal);
        if (this.runs.map((r) => r.runId).join() !== before && !this.runs[this.runs.length - 1]!.closed) return 'changed';
        return 'closed';
      }
      const res = await this.retrying(signal, () =>
        linked(signal, (poll) =>
          this.client.withAbortSignal(poll, () =>
            this.client.withDeadline(Date.now() + LONG_POLL_MS, () =>
              this.client.workflowService.getWorkflowExecutionHistory({
                namespace: this.client.options.namespace,
                execution: { workflowId: this.workflowId, runId: last.runId },
                waitNewEvent: true,
                maximumPageSize: 1000,
                ...(last.token ? { nextPageToken: last.token } : {}),
              }),
            ),
          ),
        ),
      );
      const fresh = ((res.history?.events ?? []) as HistoryEvent[]).filter((e) => Number(e.eventId) > last.lastId);
      last.token = res.nextPageToken?.length ? res.nextPageToken : undefined;
      if (fresh.length) this.append(last, fresh);
      // No token on a run that has not closed in our copy: it closed; the close event is in this page.
      if (!last.token && !last.closed) last.closed = true;
      if (fresh.length) return 'changed';
    }
  }

  private append(run: FollowedRun, raw: HistoryEvent[]): void {
    run.raw.push(...raw);
    run.events.push(...decodeEvents(raw));
    run.lastId = Number(raw[raw.length - 1]!.eventId);
    if (!run.resetFrom) {
      const base = resetBase(raw);
      if (base) run.resetFrom = base;
    }
    if (raw.some(isCloseEvent)) run.closed = true;
  }

  private fromEvents(runId: string, raw: HistoryEvent[]): FollowedRun {
    const run: FollowedRun = { runId, raw: [], events: [], lastId: 0, closed: false };
    if (raw.length) this.append(run, raw);
    return run;
  }

  private typeOf(r: FollowedRun): string {
    const started = r.events.find((e) => e.kind === 'started');
    if (started?.kind === 'started') this.workflowType ||= started.workflowType;
    return started?.kind === 'started' ? started.workflowType : this.workflowType;
  }

  /** Calls Temporal until it answers, saying what holds it up; only an abort (or a bug) rejects. */
  private async retrying<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    let delay = 500;
    let troubled = false;
    for (;;) {
      signal?.throwIfAborted();
      try {
        const out = await fn();
        if (troubled) this.onTrouble(undefined);
        return out;
      } catch (err) {
        signal?.throwIfAborted();
        const trouble = troubleOf(this.client, err, 'server');
        if (!trouble) throw err;
        troubled = true;
        this.onTrouble(trouble);
        await sleep(delay, undefined, signal ? { signal } : {});
        delay = Math.min(delay * 2, MAX_BACKOFF_MS);
      }
    }
  }
}

/**
 * Runs `fn` with a signal of its own that follows `outer`: the SDK leaves a listener on each
 * signal it is given, so one long-lived signal passed to every poll would collect them.
 */
async function linked<T>(outer: AbortSignal | undefined, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const own = new AbortController();
  const abort = () => own.abort(outer?.reason);
  outer?.addEventListener('abort', abort, { once: true });
  try {
    return await fn(own.signal);
  } finally {
    outer?.removeEventListener('abort', abort);
  }
}

/** The run a continue-as-new started, from the run's last event. */
function successor(r: FollowedRun): string | undefined {
  return r.raw[r.raw.length - 1]?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
}

function continuedFrom(r: FollowedRun): string | undefined {
  const s = r.events.find((e) => e.kind === 'started');
  return s?.kind === 'started' ? s.continuedFrom : undefined;
}
