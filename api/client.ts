/**
 * The client: drive sessions from your code as the `harness` CLI does (the CLI is built on this
 * class). `run` sends a message (starting the session when it is new) and waits until the turn
 * ends or waits on a human; `approve`, `deny` and `answer` decide what it waits on from any
 * process, `wait` follows the turn again, `cancel` stops a turn or a session, `status` and
 * `trace` read a session back. Failures a
 * person can act on are UserErrors: one line, and a hint.
 */
import { existsSync } from 'node:fs';
import os from 'node:os';
import type { Client } from '@temporalio/client';
import type { TurnResult } from '../deterministic/session';
import type { PendingApproval } from '../deterministic/session-state';
import { UsageError } from '../machine/errors';
import { metadataProblem } from '../deterministic/metadata';
import { TroubleWait } from '../client/trouble-wait';
import { existingSession, newSessionConfig, newSessionId, type SendOptions } from './send-options';
import { answerQuestion, decideApprovals, endSession, sendMessage, type DecisionRequest } from '../client/session-client';
import { waitForTurn, type TurnOutcome, type WaitOptions } from '../client/turn-wait';
import { sessionView, type SessionView } from '../client/session-status';
import { listPending, type PendingItem, type PendingOptions } from '../client/pending';
import { cancel, type CancelOptions, type Cancelled } from '../client/cancel';
import { connectClient } from '../client/temporal';
import { temporalSettings } from '../client/temporal-settings';
import type { Trace } from '../history/trace';
import type { OpenedStore } from '../history/trace/payloads';
import { openHome } from '../machine/home';
import { harnessHome } from '../machine/paths';
import { decideBudget, type BudgetDecided } from '../client/budget-client';
import { wakeSession, type Woken } from '../client/wake-client';
import type { EventOptions } from '../client/watch/follow-events';
import type { HarnessEvent } from '../client/watch/event-types';
import type { BudgetDecisionInput } from '../deterministic/messages';
import { HarnessSchedules } from './schedules';

/** Where the harness is; every field defaults from the environment as the CLI's do. */
export interface ConnectOptions {
  /** Settings source (default process.env): TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, HARNESS_TASK_QUEUE, HARNESS_MODEL … */
  env?: NodeJS.ProcessEnv;
  /** The task queue new sessions start on (default HARNESS_TASK_QUEUE, else `harness`): the one your worker polls. */
  taskQueue?: string;
  /** Who you are, as Temporal records it with your answers and approvals (default `harness-api <user>@<host>`). */
  identity?: string;
  /** Where a `harness.config.json` is looked for and `scripted:` paths start (default process.cwd()). */
  cwd?: string;
  /** Hears notes, one line each: the settings of an untrusted `harness.config.json` that were ignored (default: none). */
  onNote?: (line: string) => void;
}


/** Where a message went; `O` types the output its turn's `wait()` gives. */
export interface SentMessage<O = unknown> {
  sessionId: string;
  turnId: string;
  turn: number;
  /** Sent while a turn ran: the message went to that turn (`turnId`), for its next step or interrupting its current one. */
  steered?: 'queue' | 'interrupt';
  /** The events of this turn as it runs, until its `final` (HarnessClient.events with this turn). */
  events(opts?: Omit<EventOptions, 'turnId'>): AsyncIterable<HarnessEvent>;
  /** Waits for this turn (HarnessClient.wait), its `result.output` typed as send's `output` or agent. */
  wait(opts?: WaitOptions): Promise<TypedOutcome<O>>;
}

/** A turn's outcome (done, or waiting on a human) with `result.output` of type `O` (the session's structured output). */
export type TypedOutcome<O = unknown> = { kind: 'done'; result: TurnResult<O> } | Extract<TurnOutcome, { kind: 'waiting' }>;

/** A turn's outcome (done, or waiting on a human) with where it is. */
export type RunOutcome<O = unknown> = TypedOutcome<O> & SentMessage<O>;

/** What a decision applied to: the turn to wait on, the calls decided, what an `always` granted. */
export interface Decided {
  turnId: string;
  calls: PendingApproval[];
  granted: string[];
}

/** Options of the calls that reach a running turn. */
export interface DeliverOptions {
  /** @internal How the CLI rides out outages while delivering. */
  troubleWait?: TroubleWait;
}

/** What a trace includes. */
export interface TraceOptions {
  /** Add the payloads history names by hash (messages, whole arguments and results), read from the message store (DATABASE_URL, or the embedded one under HARNESS_HOME). */
  full?: boolean;
  /** @internal A message store the caller opened (the CLI's --full). */
  store?: OpenedStore;
  /** @internal With payloads: each model call's whole input (`context`), for an OTLP export. */
  wholeInput?: boolean;
}

/** Connects to Temporal (retrying for a while when it is slow) and returns a client. */
export async function connectHarness(opts: ConnectOptions = {}): Promise<HarnessClient> {
  const env = { ...(opts.env ?? process.env), ...(opts.taskQueue ? { HARNESS_TASK_QUEUE: opts.taskQueue } : {}) };
  const s = temporalSettings(env);
  const client = await connectClient(s, 5_000, opts.identity ?? `harness-api ${username(env)}@${os.hostname()}`);
  return new HarnessClient(client, { taskQueue: s.taskQueue, env, ...(opts.cwd ? { cwd: opts.cwd } : {}), ...(opts.onNote ? { onNote: opts.onNote } : {}), owned: true });
}

/** A client of the harness over a Temporal client; see the module comment. */
export class HarnessClient {
  /** `owned`: close() closes the connection too (connectHarness made it). */
  constructor(
    readonly temporal: Client,
    private readonly opts: { taskQueue?: string; env?: NodeJS.ProcessEnv; cwd?: string; owned?: boolean; onNote?: (line: string) => void } = {},
  ) {}

  /** Messages sent at set times (Temporal Schedules): create, list, describe, pause, resume, trigger, delete. */
  get schedules(): HarnessSchedules {
    return new HarnessSchedules(this.temporal, this.opts);
  }

  /** Sends a message (starting the session when it is new) and returns the turn it started, without waiting. */
  send<O = unknown>(text: string, opts?: SendOptions<O>): Promise<SentMessage<O>>;
  async send(text: string, opts: SendOptions = {}): Promise<SentMessage> {
    const sessionId = opts.sessionId ?? newSessionId();
    // Refused before anything is read or started.
    const problem = opts.metadata !== undefined ? metadataProblem(opts.metadata) : undefined;
    if (problem) throw new UsageError(problem, 'give a plain object of JSON values (strings, numbers, booleans, null, arrays, objects); keep large data out of it');
    const resolved = opts.config !== undefined ? (opts.config ?? undefined) : await newSessionConfig(this.temporal, sessionId, opts, this.opts);
    if (opts.metadata !== undefined && opts.config === null) throw existingSession(sessionId);
    const config = resolved && opts.metadata !== undefined ? { ...resolved, metadata: opts.metadata } : resolved;
    if (config && !this.opts.taskQueue) throw new UsageError('this client was made without a task queue and cannot start sessions');
    const sent = await sendMessage(this.temporal, {
      taskQueue: this.opts.taskQueue ?? '',
      sessionId,
      ...(config ? { config } : {}),
      text,
      ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}),
      ...(opts.whileRunning ? { whileRunning: opts.whileRunning } : {}),
      ...(opts.troubleWait ? { troubleWait: opts.troubleWait } : {}),
    });
    return this.withEvents({ sessionId, ...sent });
  }

  /** Sends a message and waits until its turn ends or waits on a human (then approve, deny or answer, and wait). */
  run<O = unknown>(text: string, opts?: SendOptions<O> & { wait?: WaitOptions }): Promise<RunOutcome<O>>;
  async run(text: string, opts: SendOptions & { wait?: WaitOptions } = {}): Promise<RunOutcome> {
    const sent = await this.send(text, opts);
    return this.withEvents({ ...sent, ...(await this.wait(sent.turnId, opts.wait)) });
  }

  /** Waits until the turn ends or waits on a human, riding out outages (bounded by `timeoutMs`); `O` types `result.output`. */
  wait<O = unknown>(turnId: string, opts?: WaitOptions): Promise<TypedOutcome<O>>;
  wait(turnId: string, opts: WaitOptions = {}): Promise<TurnOutcome> {
    return waitForTurn(this.temporal, turnId, opts);
  }

  /**
   * Answers the session's pending question; returns the turn to wait on. With `questionId` (a
   * pending() item's) the answer is refused unless that question is the one waiting.
   */
  async answer(sessionId: string, text: string, opts: DeliverOptions & { questionId?: string } = {}): Promise<{ turnId: string }> {
    return { turnId: await answerQuestion(this.temporal, sessionId, text, opts.troubleWait, opts.questionId) };
  }

  /**
   * Every approval and question waiting in running sessions, on any task queue (or only
   * `taskQueue`'s), oldest first: read from Temporal's visibility and each session's history, so
   * no worker needs to answer. Decide each by its id: `approve`/`deny(sessionId, { callIds: [callId] })`,
   * `answer(sessionId, text, { questionId })`.
   */
  pending(opts: PendingOptions = {}): Promise<PendingItem[]> {
    return listPending(this.temporal, opts);
  }

  /** Approves pending calls (default: all of the step); `always` allows the same for the rest of the session (a string: commands starting with those words). */
  approve(sessionId: string, opts: { callIds?: string[]; always?: boolean | string } = {}): Promise<Decided> {
    return this.decide(sessionId, {
      approve: true,
      ...(opts.callIds ? { callIds: opts.callIds } : {}),
      ...(opts.always ? { always: true } : {}),
      ...(typeof opts.always === 'string' ? { pattern: opts.always } : {}),
    });
  }

  /** Denies pending calls (default: all of the step); the model reads APPROVAL_DENIED with the reason. */
  deny(sessionId: string, opts: { callIds?: string[]; reason: string }): Promise<Decided> {
    return this.decide(sessionId, { approve: false, reason: opts.reason, ...(opts.callIds ? { callIds: opts.callIds } : {}) });
  }

  /** Decides pending calls; each named with the digest shown is refused if the call changed since. */
  decide(sessionId: string, request: DecisionRequest, opts: DeliverOptions = {}): Promise<Decided> {
    return decideApprovals(this.temporal, sessionId, request, opts.troubleWait);
  }

  /**
   * Decides a turn that waits for its budget: `raise` the budget it reached by an amount in that
   * budget's unit (the turn goes on), or `stop` it (it ends `budget_exceeded`, keeping its work).
   */
  decideBudget(sessionId: string, decision: BudgetDecisionInput, opts: DeliverOptions = {}): Promise<BudgetDecided> {
    return decideBudget(this.temporal, sessionId, decision, opts.troubleWait);
  }

  /**
   * Wakes a session whose turn sleeps in a `wait` call: the call ends now and the model reads that
   * it was woken, with `reason` and this client's identity. Refused with a one-line error when the
   * session is not sleeping (or no such session).
   */
  wake(sessionId: string, reason?: string, opts: DeliverOptions = {}): Promise<Woken> {
    const by = this.temporal.options.identity;
    return wakeSession(this.temporal, sessionId, { ...(reason ? { reason } : {}), ...(by ? { by } : {}), ...(opts.troubleWait ? { troubleWait: opts.troubleWait } : {}) });
  }

  /** A session's state; a closed one (failed, terminated, ended) says why and when. */
  status(sessionId: string, opts: { timeoutMs?: number } & DeliverOptions = {}): Promise<SessionView> {
    return sessionView(this.temporal, sessionId, opts.troubleWait ?? new TroubleWait({ deadline: Date.now() + (opts.timeoutMs ?? 60_000) }));
  }

  /** The spans of a session (every turn) or of one turn (`<session>/turn-N`), from its history; `full` adds payloads from the message store. */
  async trace(id: string, opts: TraceOptions = {}): Promise<Trace> {
    // Loaded when a trace is asked for: the span builders bring the tools' zod schemas, which
    // the other calls (`harness status`, `approve` …) do not need.
    const [{ loadTrace }, { openMessageStore }] = await Promise.all([import('../history/trace'), import('../client/store-reader')]);
    const env = this.opts.env ?? process.env;
    const store = opts.store ?? (opts.full ? await openMessageStore(openHome(env).home, env) : undefined);
    try {
      return await loadTrace(this.temporal, id, store ? { store, ...(opts.wholeInput ? { wholeInput: true } : {}) } : {});
    } finally {
      if (!opts.store && store && 'close' in store) await store.close();
    }
  }

  /**
   * The events of a session's turn as they happen (turn started, step, model text, tool call,
   * approval needed and decided, tool result, question asked and answered, budget wait and
   * decision, final), read from the turn's history by long poll: any process that reaches
   * Temporal can follow a turn, with no worker in it and no polling of the workflow. The text a
   * model call streams comes as model_text_delta events to a client that also reaches the
   * workers' database (DATABASE_URL, or the embedded one of this HARNESS_HOME). Ends after
   * the `final` event. `from` (an event seen before, or its offset) goes on right after it, so a
   * client that lost its connection misses nothing and sees nothing twice. Without `turnId`: the
   * session's latest turn. An unknown session or turn is a one-line UserError.
   */
  events(sessionId: string, opts: EventOptions = {}): AsyncIterable<HarnessEvent> {
    const temporal = this.temporal;
    const env = this.opts.env ?? process.env;
    return {
      async *[Symbol.asyncIterator]() {
        // Loaded when events are asked for, as for trace(): the span builders bring the tools' schemas.
        const [{ turnEvents }, { openStreamSource }] = await Promise.all([import('../client/watch/follow-events'), import('../client/watch/stream-source')]);
        // Streamed text from the workers' database (DATABASE_URL, else this home's embedded one),
        // opened once a call is seen running; a home that does not exist is not made for it.
        const streams = () => openStreamSource(env, () => (existsSync(harnessHome(env)) ? openHome(env).home : undefined));
        yield* turnEvents(temporal, sessionId, { streams, ...opts });
      },
    };
  }

  /**
   * Cancels a turn (`<session>/turn-N`): it stops within seconds, killing a running run_shell
   * command in the sandbox, and ends `cancelled`, keeping its work; its session takes the next
   * message. Or a session: it is ended, its current turn cancelled, its sandbox removed. Waits
   * until that happened (bounded by `timeoutMs`); a finished turn or session is a UserError.
   */
  cancel(turnOrSession: string, opts: CancelOptions = {}): Promise<Cancelled> {
    return cancel(this.temporal, turnOrSession, opts);
  }

  /** Ends a session once its current turn is done. */
  async end(sessionId: string): Promise<void> {
    await endSession(this.temporal, sessionId);
  }

  /** Closes the connection (when connectHarness made it). */
  async close(): Promise<void> {
    if (this.opts.owned) await this.temporal.connection.close();
  }

  /** Gives a sent message its `events()` and `wait()` (not enumerable: the object stays plain data to print or compare). */
  private withEvents<T extends Omit<SentMessage, 'events' | 'wait'>>(sent: T): T & SentMessage {
    const events = (opts: Omit<EventOptions, 'turnId'> = {}) => this.events(sent.sessionId, { ...opts, turnId: sent.turnId });
    const wait = (opts?: WaitOptions) => this.wait(sent.turnId, opts);
    return Object.defineProperties(sent, { events: { value: events, enumerable: false }, wait: { value: wait, enumerable: false } }) as T & SentMessage;
  }
}

/** The login name; a uid without a passwd entry (containers) has none, which is no reason to fail. */
function username(env: NodeJS.ProcessEnv): string {
  try {
    return os.userInfo().username;
  } catch {
    return env.USER || env.LOGNAME || `uid-${process.getuid?.() ?? 'unknown'}`;
  }
}
