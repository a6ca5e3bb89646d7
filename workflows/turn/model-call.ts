/**
 * The turn's model call. A call first runs as a local activity (unless limits.modelLocalMs is 0), inside
 * the workflow task of the worker that runs the turn: a step whose model answers quickly is then
 * one workflow task, not a workflow task, an activity task and another workflow task. Only what
 * is quick stays there:
 *
 * - A reply slower than limits.modelLocalMs (AFTER_UNRECORDED_MS when quick steps before it wait
 *   to be recorded), or whose text starts to stream, is handed on: the local activity returns a
 *   key and its worker's own task queue, and the callModel activity, scheduled on that queue,
 *   goes on waiting for the same request on that worker (any other worker would call again: two
 *   requests, two bills). So signals, updates and cancellation wait at most that long, and a
 *   slow call shows as a pending activity (its endpoint, attempt, streamed text) as it always did.
 *   A worker gone before it takes the activity (HANDOFF_PICKUP_MS) lost the request with it: the
 *   call is sent again from the shared queue, as a second attempt.
 * - A local attempt that fails is tried again by the callModel activity, which counts its attempts
 *   on from it and carries what it wasted: every retry and every failure for good is an activity
 *   in history, as before.
 * - Before either activity, before a model call that follows a local tool with effects
 *   (write_file), and before the turn waits on a person, the workflow task ends (the no-op
 *   `checkpoint` activity; a Temporal timer would be as good but fires on whole seconds): the
 *   local activities' markers are recorded first. A crash then never loses the record of an
 *   effect, and `harness retry`, which resets a turn to the task that scheduled its failed call
 *   (or, stopped while it waited, to its last task), keeps every step before it.
 * - Steps run in one workflow task reach history when it ends: so that live views (`status`,
 *   `trace --follow`, the console) are never far behind, the task also ends before a model call
 *   once the local calls it has not recorded took SHOWN_WITHIN_MS of model time. A fast model's
 *   steps share a task; a real model's (a second or more a call) end one each, as they did when
 *   every call was an activity.
 * - A worker lost during a workflow task loses what the task had not recorded: the new worker,
 *   once the task times out (10 s), asks the model again for those steps (at most about
 *   SHOWN_WITHIN_MS of them, read-only tools between) and the call in flight. Nothing with an
 *   effect is redone: an effect's marker is recorded before the next model call.
 *
 * A local activity's input is not in history, so its result repeats the request
 * (LocalModelOutcome); the history readers take the marker for the call's scheduled and
 * completed events (history/trace/events.ts).
 */
import { ActivityFailure, ApplicationFailure, isCancellation, proxyActivities, proxyLocalActivities, TimeoutFailure, type ActivityOptions } from '@temporalio/workflow';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import type { EarlierAttempt, LocalModelOutcome, ModelCallInput, ModelReply } from '../../deterministic/activity-types';
import { rootCauseMessage } from '../../deterministic/errors';
import type { Limits } from '../../deterministic/session-config';
import type { RunEvents } from './run-events';
import type { Activities } from '../activity-options';
import { failureOf } from './budget';
import { attemptCap, MODEL_BACKOFF, modelRetry } from '../../deterministic/model-retry';
import { AFTER_UNRECORDED_MS, MODEL_LOCAL_MS_WHEN_UNSET, SHOWN_WITHIN_MS } from './replay-constants';

type CallModel = (input: ModelCallInput) => Promise<ModelReply>;

/** The no-op activity that ends a workflow task: quick, so a short bound and a few quick retries. */
const { checkpoint } = proxyActivities<Activities>({ startToCloseTimeout: '10s', retry: { maximumAttempts: 5, initialInterval: '200ms' } });

export class ModelCaller {
  /**
   * What ran locally since the workflow task last ended: a tool with effects, model calls and
   * their model time (the replies' latency, as recorded: replay reads the same).
   */
  private unrecorded = { effect: false, calls: 0, ms: 0 };
  private readonly callActivity: CallModel;
  /** The activity after a failed local attempt: one attempt fewer (the cap counts the local one). */
  private readonly retrying: CallModel;
  private readonly local: (input: ModelCallInput) => Promise<LocalModelOutcome>;
  /** The activity on the task queue of the worker that holds a handed-on call. */
  private readonly holding: (queue: string) => CallModel;
  private readonly handOffAfterMs: number;
  /** Whether model calls run locally first (limits.modelLocalMs above 0): settled at the run's first model call. */
  private localAllowed: boolean | undefined;

  constructor(
    limits: Limits,
    private readonly events: RunEvents,
    /** Whether the run takes a later patch (patches.ts: a run of the current code takes every one without a marker of its own). */
    private readonly since: (patchId: string) => boolean,
  ) {
    // Every call carries its retry bounds, and its activity fails for good past them
    // (activities/model/retry.ts): rate limits and outages are retried over limits.modelRetryWindowMs,
    // other failures limits.modelMaxAttempts times. Temporal's maximumAttempts is only the cap a
    // worker lost again and again reaches; its backoff is the one the activity reckons with.
    const retry = modelRetry(limits);
    const cap = attemptCap(retry);
    const bounded = (call: CallModel): CallModel => (input) => call({ ...input, retry });
    const options = (maximumAttempts: number): ActivityOptions => ({
      startToCloseTimeout: limits.modelTimeoutMs,
      heartbeatTimeout: limits.modelHeartbeatMs,
      retry: { initialInterval: MODEL_BACKOFF.initialMs, backoffCoefficient: MODEL_BACKOFF.coefficient, maximumInterval: MODEL_BACKOFF.maximumMs, maximumAttempts },
    });
    this.callActivity = bounded(proxyActivities<Activities>(options(cap)).callModel as CallModel);
    this.retrying = bounded(proxyActivities<Activities>(options(cap - 1)).callModel as CallModel);
    const local = proxyLocalActivities<Activities>({ startToCloseTimeout: limits.modelTimeoutMs, retry: { maximumAttempts: 1 } }).callModel as (input: ModelCallInput) => Promise<LocalModelOutcome>;
    this.local = (input) => local({ ...input, retry });
    // The activity a hand-off goes on in, on the queue of the worker that holds the request: that
    // request's one attempt (a retry there would wait on a lost worker's queue).
    this.holding = (queue) => bounded(proxyActivities<Activities>({ ...options(1), taskQueue: queue, scheduleToStartTimeout: HANDOFF_PICKUP_MS }).callModel as CallModel);
    // At most half an attempt's time: the hand-off comes well before the call's own deadline.
    this.handOffAfterMs = Math.min(limits.modelLocalMs ?? MODEL_LOCAL_MS_WHEN_UNSET, limits.modelTimeoutMs / 2);
  }

  /** A local tool ran that changed something: its marker is recorded before the next model call. */
  noteLocalEffect(): void {
    this.unrecorded.effect = true;
  }

  /** The workflow task ended (an activity was scheduled): everything before is in history. */
  recorded(): void {
    this.unrecorded = { effect: false, calls: 0, ms: 0 };
  }

  /** One of the turn's other activities: counted, and (scheduled) it ends the workflow task, recording what ran locally before it. */
  async activity<T>(run: () => Promise<T>): Promise<T> {
    this.events.add('activity');
    try {
      return await run();
    } finally {
      this.recorded();
    }
  }

  /**
   * Before the turn waits on a person: what ran locally is recorded first, so the wait's own
   * workflow task holds none of it, and `harness retry` of a turn stopped while it waits (reset
   * to its last workflow task) keeps every step before.
   */
  async beforeWait(): Promise<void> {
    if (this.localAllowed && (this.unrecorded.calls || this.unrecorded.effect)) await this.endTask();
  }

  /** One model call: locally first when the run allows it, else (or then) the callModel activity. */
  async call(input: ModelCallInput): Promise<ModelReply> {
    this.localAllowed ??= this.handOffAfterMs > 0;
    if (!this.localAllowed) {
      this.events.add('activity');
      return this.callActivity(input);
    }
    if (this.unrecorded.effect || this.unrecorded.ms >= SHOWN_WITHIN_MS) await this.endTask();
    let handedOn: { adopt: string } | { earlier: EarlierAttempt };
    let holder: string | undefined;
    try {
      this.events.add('local');
      const handOffAfterMs = this.unrecorded.calls ? Math.min(this.handOffAfterMs, AFTER_UNRECORDED_MS) : this.handOffAfterMs;
      const out = await this.local({ ...input, handOffAfterMs });
      if (!('handoff' in out)) {
        const { request: _request, ...reply } = out;
        this.unrecorded.calls += 1;
        this.unrecorded.ms += Number(reply.latencyMs) || 0;
        return reply;
      }
      handedOn = { adopt: out.handoff };
      // The marker names the worker's queue (workers before it named none).
      if (out.queue && this.since(HANDOFF_QUEUE_PATCH)) holder = out.queue;
    } catch (err) {
      if (isCancellation(err)) throw err;
      handedOn = { earlier: earlierAttempt(err) };
    }
    await this.endTask();
    if (holder && 'adopt' in handedOn) return this.adoptOn(holder, { ...input, ...handedOn });
    return this.activity(() => ('earlier' in handedOn ? this.retrying({ ...input, ...handedOn }) : this.callActivity({ ...input, ...handedOn })));
  }

  /**
   * A handed-on call's activity, on the queue of the worker that holds its request: one attempt
   * there, as the local one was (any later attempt is a new request, which any worker may send).
   * When it fails, or its worker is lost (its heartbeat) or gone before it took the activity
   * (HANDOFF_PICKUP_MS), the call goes on from the shared queue as a local attempt's would,
   * counting on from it; a failure for good (or its bounds reached) fails the call here.
   */
  private async adoptOn(queue: string, input: ModelCallInput & { adopt: string }): Promise<ModelReply> {
    let earlier: EarlierAttempt;
    try {
      return await this.activity(() => this.holding(queue)(input));
    } catch (err) {
      if (isCancellation(err) || (err instanceof ActivityFailure && err.retryState === 'NON_RETRYABLE_FAILURE')) throw err;
      earlier = notTaken(err) ? { attempts: 1, failure: `the worker that held the request did not take it back within ${HANDOFF_PICKUP_MS / 1000} s` } : { ...earlierAttempt(err), ...askedWait(err) };
    }
    const { adopt: _adopt, ...request } = input;
    return this.activity(() => this.retrying({ ...request, earlier }));
  }

  /** Ends the workflow task (the checkpoint activity), so the markers of the local activities before it are recorded. */
  private endTask(): Promise<void> {
    return this.activity(() => checkpoint());
  }
}

/**
 * How long the activity of a handed-on call waits for the worker that holds the request to take
 * it. That worker polls its queue with slots of its own (workers/handoff-queue.ts), so only a
 * worker that is gone (or stuck) takes longer; then the call is sent again from the shared queue.
 */
export const HANDOFF_PICKUP_MS = 10_000;

/** Since this patch a handed-on call's activity goes to the worker that holds it (runs recorded before sent it to the shared queue). */
const HANDOFF_QUEUE_PATCH = 'model-handoff-queue';

/**
 * The wait the endpoint asked for before the next request (a Retry-After), which an activity's
 * failure carries for Temporal's retry (nextRetryDelay): the activity that tries again waits it.
 */
function askedWait(err: unknown): Pick<EarlierAttempt, 'retryAfterMs'> {
  const ms = optionalTsToMs(applicationFailure(err)?.failure?.applicationFailureInfo?.nextRetryDelay);
  return ms !== undefined && ms > 0 ? { retryAfterMs: ms } : {};
}

/** Whether an activity failed because no worker of its queue took it in time. */
function notTaken(err: unknown): boolean {
  return err instanceof ActivityFailure && err.cause instanceof TimeoutFailure && err.cause.timeoutType === 'SCHEDULE_TO_START';
}

/** What a failed local attempt leaves the activity: its attempts, waste and failure, and whether (and in which run) it was permanent. */
function earlierAttempt(err: unknown): EarlierAttempt {
  const spent = failureOf(err);
  const cause = applicationFailure(err);
  const runId = (cause?.details?.[0] as { runId?: unknown } | undefined)?.runId;
  // The wait before the next request (a Retry-After): Temporal does not carry it from a local activity to an activity.
  const retryAfterMs = (cause?.details?.[0] as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  return {
    attempts: spent?.attempt ?? 1,
    failure: rootCauseMessage(err).slice(0, 500),
    ...(spent?.wasted ? { wasted: spent.wasted } : {}),
    ...(cause?.nonRetryable && typeof runId === 'string' ? { permanent: { type: cause.type ?? 'MODEL_ERROR', runId } } : {}),
    ...(typeof retryAfterMs === 'number' && retryAfterMs > 0 ? { retryAfterMs } : {}),
    ...(cause?.type === 'MODEL_TIMEOUT' ? { timeouts: 1 } : {}),
  };
}

/** The application failure in an activity failure's causes (the activity's own error). */
function applicationFailure(err: unknown): ApplicationFailure | undefined {
  for (let e = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) if (e instanceof ApplicationFailure) return e;
  return undefined;
}
