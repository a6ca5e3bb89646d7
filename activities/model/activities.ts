/** The callModel activity: one chat-completions call, heartbeating while it waits. */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { LocalModelOutcome, ModelCallInput, ModelReply } from '../../deterministic/activity-types';
import type { ChatMessage, ToolSpec, Usage } from '../../deterministic/types';
import { withCallIds } from '../../deterministic/call-ids';
import type { ToolRegistry } from '../../deterministic/tools';
import { messageTokens, type Conversations, type Draft } from '../store/conversations';
import { callsView, contentView } from '../store/views';
import { requestContext } from '../store/request';
import type { ModelClient } from './client';
import { boundedAnswer } from './reply';
import { attemptBudgetMs, endpointLabel, modelTimeout, toModelFailure } from './errors';
import { callDeciding, inMode, type ToolModeCache } from './auto';
import { exchange, type Exchanged } from './exchange';
import type { ToolModeDecision } from '../../deterministic/tool-mode';
import { replyNotes } from './notes';
import { addWaste, reportedUsage, withWaste } from '../usage-waste';
import { withHeartbeat } from '../heartbeat';
import type { ModelStreamSink } from './stream-writer';
import { ModelHandoffs } from './handoffs';
import { activityFailure, localFailure, waitAsAsked, type OutageProgress } from './retry';

/** Resolves the client and endpoint description for a model reference. */
export type ModelResolver = (input: ModelCallInput) => Promise<{ client: ModelClient; endpoint: string }>;

/**
 * Attempts of one call that may time out. Each costs the whole per-attempt timeout, and an
 * endpoint that stayed silent twice rarely answers a third time: two bound a silent endpoint
 * to about twice the timeout (~4 min by default) while quick failures (429, 5xx, refused
 * connections) keep every attempt of limits.modelMaxAttempts.
 */
export const TIMED_OUT_ATTEMPTS = 2;

/**
 * What the call heartbeats: the endpoint, so a waiting client can name it (describe shows
 * heartbeat details), and how many attempts timed out so far, which the next attempt reads.
 */
export interface ModelCallProgress extends OutageProgress {
  endpoint: string;
  timeouts: number;
  /** Tokens earlier attempts paid for without a usable reply (see usage-waste.ts). */
  wasted?: Usage;
  /** Requests of the call before this activity (a failed local attempt): a view adds them to the activity's attempt. */
  earlier?: number;
  /** Why the request before this activity failed: Temporal's last failure covers only the activity's own attempts. */
  earlierFailure?: string;
  /** limits.modelMaxAttempts: the attempts of a call that fails other than by an outage. */
  maxAttempts?: number;
}

/** What callModel needs beyond the model: the message store (turns that use it) and the tools. */
export interface CallModelDeps {
  conversations?: Conversations;
  registry?: ToolRegistry;
  /** The tool modes `auto` decided on this worker, by endpoint and model (default: one map per callModel). */
  toolModes?: ToolModeCache;
  /** Where replies' text goes as it arrives, for readers anywhere (stream-writer.ts); unset: no streaming. */
  streams?: ModelStreamSink;
  /**
   * The task queue only this worker polls (workers/handoff-queue.ts): a call handed on names it,
   * so the activity that waits for the reply runs here. Unset: the activity goes to the shared
   * queue, where another worker would send the request again.
   */
  handoffQueue?: string;
}

/** A model request under way on this worker, whichever activity waits for it now. */
interface RunningCall {
  readonly input: ModelCallInput;
  readonly progress: ModelCallProgress;
  readonly started: number;
  readonly draft: Draft | undefined;
  readonly budgetMs: number | undefined;
  /** The reply without its attempt and latency (the activity that finishes the call adds them), or why the request failed. */
  readonly outcome: Promise<{ reply: Omit<ModelReply, 'attempt' | 'latencyMs'> } | { error: unknown; timedOut: boolean }>;
  /** Called with each streamed chunk: the activity waiting for the call heartbeats. */
  onChunk: () => void;
  /** Stops the request (the activity waiting for it was cancelled, or nobody took it on). */
  abort(): void;
}

/** Builds callModel over a resolver and a source of tool schemas. */
export function createCallModel(resolve: ModelResolver, toolSpecs: (input: ModelCallInput) => Promise<ToolSpec[]> | ToolSpec[], deps: CallModelDeps = {}) {
  const toolModes: ToolModeCache = deps.toolModes ?? new Map();
  // Calls local activities handed on, waiting for the callModel activity on this worker (its hand-off queue).
  const handoffs = new ModelHandoffs<RunningCall>();

  /** Sends the request; resolves once it is under way (its context read from the store). */
  async function start(input: ModelCallInput, ctx: Context, progress: ModelCallProgress, waitedMs = 0): Promise<RunningCall> {
    const { client, endpoint } = await resolve(input);
    progress.endpoint = endpointLabel(endpoint);
    // The system text the call brings is written with its reply's chain (storeReply), in the same statement.
    const context = await requestContext(input, deps.conversations, { defer: true });
    const tools = await toolSpecs(input);
    // Our own deadline, inside Temporal's start-to-close: the failure then names the endpoint
    // instead of being Temporal's anonymous "activity StartToClose timeout". It runs from the
    // request's start, whichever activity waits for it (less any wait the attempt made before it).
    const budgetMs = attemptBudgetMs(ctx.info.startToCloseTimeoutMs === undefined ? undefined : ctx.info.startToCloseTimeoutMs - waitedMs);
    const deadline = new AbortController();
    const cancel = new AbortController();
    const timer = budgetMs === undefined ? undefined : setTimeout(() => deadline.abort(), budgetMs);
    // Native calls of a turn stream their text to the side channel; each chunk is a heartbeat too.
    const native = (input.toolMode?.mode ?? 'native') === 'native' && !input.decideToolMode;
    const attempt = ctx.info.attempt + (input.earlier?.attempts ?? 0);
    const stream = deps.streams && !input.noStream && input.purpose !== 'compress' && native ? deps.streams.writer({ sessionId: input.sessionId, turnId: input.turnId, step: input.step, callIndex: input.callIndex, attempt }) : undefined;
    const req = {
      model: input.model.model,
      messages: context.messages,
      tools,
      headers: {
        'x-harness-session': input.model.scriptKey ?? input.sessionId,
        'x-harness-call-index': String(input.callIndex),
        'x-harness-purpose': input.purpose ?? 'turn',
      },
      cacheKey: input.sessionId,
      signal: AbortSignal.any([cancel.signal, deadline.signal]),
      ...(input.maxOutputTokens ? { maxOutputTokens: input.maxOutputTokens } : {}),
      ...(stream
        ? {
            onText: (chunk: string) => {
              stream.write(chunk);
              call.onChunk();
            },
          }
        : {}),
    };
    const exchanged = async (): Promise<Exchanged & { decided?: ToolModeDecision }> => {
      const key = `${endpoint}|${input.model.model}`;
      if (input.decideToolMode && !input.toolMode) {
        const { exchanged: done, decided } = await callDeciding(client, req, key, toolModes);
        return { ...done, ...(decided ? { decided } : {}) };
      }
      if (input.toolMode) return inMode(client, req, input.toolMode, key, toolModes);
      return exchange(client, req, { mode: 'native' }); // turns recorded before tool modes
    };
    const call: RunningCall = {
      input,
      progress,
      started: Date.now(),
      draft: context.draft,
      budgetMs,
      onChunk: () => undefined,
      abort: () => cancel.abort(),
      outcome: exchanged()
        .then(
          (done) => ({ reply: { ...boundedAnswer(done.answer), ...replyNotes(done, input.toolMode ?? done.decided, done.decided) } }),
          (error: unknown) => ({ error, timedOut: deadline.signal.aborted && !cancel.signal.aborted }),
        )
        // The streamed text stored before the reply is recorded, so a reader that sees the reply
        // in history has its last pieces too (bounded: close() never fails and waits briefly).
        .then(async (outcome) => {
          await stream?.close();
          return outcome;
        }),
    };
    void call.outcome.finally(() => clearTimeout(timer));
    return call;
  }

  /** The call's reply stored, as the workflow keeps it, or its failure with its attempt and waste (the history the ledger reads). */
  async function finish(call: RunningCall, ctx: Context, beat: () => void, runId?: string): Promise<ModelReply> {
    const { progress, input } = call;
    const attempt = ctx.info.attempt + (input.earlier?.attempts ?? 0);
    const done = await call.outcome;
    if ('error' in done) {
      // No reply to chain: the texts the request brought are stored on their own (what a trace of the failed call shows).
      if (call.draft?.texts?.length) await deps.conversations?.putTexts(input.sessionId, call.draft.texts).catch(() => undefined);
      // Tokens the provider says this failed attempt used are paid for: the next attempt reads them here.
      progress.wasted = addWaste(progress.wasted, reportedUsage(done.error));
      if (done.timedOut) {
        progress.timeouts += 1;
        beat(); // the next attempt reads the count from here
        throw withWaste(modelTimeout(progress.endpoint, call.budgetMs!, progress.timeouts >= TIMED_OUT_ATTEMPTS ? progress.timeouts : undefined), progress.wasted, attempt, runId);
      }
      if (progress.wasted) beat();
      throw withWaste(toModelFailure(done.error, progress.endpoint), progress.wasted, attempt, runId);
    }
    // Outside the model's error handling: a store failure is the store's, not the model's.
    const reply: ModelReply = { ...done.reply, attempt, latencyMs: Date.now() - call.started, ...(progress.wasted ? { wasted: progress.wasted } : {}) };
    try {
      return call.draft ? await storeReply(input, reply, call.draft, deps) : reply;
    } catch (err) {
      // The reply was paid for; the retry pays again.
      progress.wasted = addWaste(progress.wasted, reply.usage);
      beat();
      throw withWaste(err, progress.wasted, attempt, runId);
    }
  }

  /**
   * Run as a local activity: the reply if it comes within input.handOffAfterMs, else the key
   * under which the request, still under way, waits for the callModel activity, and the queue
   * that brings that activity to this worker (one attempt: the workflow retries a failure as that
   * activity). A reply whose text starts to stream is handed on at once: a pending activity's
   * text is what live views show as it arrives.
   */
  async function callHere(input: ModelCallInput & { handOffAfterMs: number }, ctx: Context): Promise<LocalModelOutcome> {
    // A failure names the run it happened in (EarlierAttempt.permanent).
    const runId = ctx.info.workflowExecution?.runId;
    let call: RunningCall;
    try {
      call = await start(input, ctx, { endpoint: '', timeouts: 0 });
    } catch (err) {
      throw withWaste(err, undefined, ctx.info.attempt, runId);
    }
    const stop = () => call.abort();
    ctx.cancellationSignal.addEventListener('abort', stop);
    if (ctx.cancellationSignal.aborted) stop();
    let wait: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      wait = setTimeout(() => resolve('late'), input.handOffAfterMs);
      call.onChunk = () => resolve('late');
    });
    try {
      if ((await Promise.race([call.outcome, late])) === 'late') return { handoff: handoffs.put(call), ...(deps.handoffQueue ? { queue: deps.handoffQueue } : {}) };
      return { ...(await finish(call, ctx, () => undefined, runId)), request: input };
    } finally {
      clearTimeout(wait);
      ctx.cancellationSignal.removeEventListener('abort', stop);
    }
  }

  return async function callModel(input: ModelCallInput): Promise<ModelReply | LocalModelOutcome> {
    const ctx = Context.current();
    if (input.handOffAfterMs !== undefined) {
      return callHere({ ...input, handOffAfterMs: input.handOffAfterMs }, ctx).catch((err: unknown) => {
        throw localFailure(err, ctx.info.attempt, input.retry);
      });
    }
    const earlier = input.earlier;
    if (earlier?.permanent && earlier.permanent.runId === ctx.info.workflowExecution?.runId) {
      // The local attempt failed for good in this run: recorded here, not sent again. (A run that
      // `harness retry` reset is another run: there the request goes out again.)
      throw withWaste(ApplicationFailure.nonRetryable(earlier.failure, earlier.permanent.type), earlier.wasted, earlier.attempts);
    }
    // A call a local activity handed on to this worker: wait for it; elsewhere (a worker without a
    // hand-off queue sent it to the shared one), call again.
    const adopted = input.adopt ? handoffs.take(input.adopt) : undefined;
    const before = ctx.info.heartbeatDetails as Partial<ModelCallProgress> | undefined;
    const wasted = before?.wasted ?? earlier?.wasted;
    const progress: ModelCallProgress = adopted?.progress ?? { endpoint: '', timeouts: before ? Number(before.timeouts) || 0 : (earlier?.timeouts ?? 0), ...(wasted ? { wasted } : {}) };
    // What live views count and show: requests before this activity, the attempts allowed.
    Object.assign(progress, { earlier: earlier?.attempts, earlierFailure: earlier?.failure, maxAttempts: input.retry?.attempts, outage: undefined, retryUntil: undefined, nextAt: undefined });
    const beat = () => ctx.heartbeat(progress);
    // Heartbeats let Temporal notice a dead worker long before the call's own timeout (the
    // heartbeat timeout is seconds: limits.modelHeartbeatMs); they go on until the reply is
    // stored: on a timer while the call waits for its first byte, and with every chunk of a
    // streamed reply. The first is a third of the timeout in, not at once: the timeout counts
    // from the start anyway, and a call shorter than that costs the server no heartbeat (a
    // round trip and a write of the activity's state). The progress an attempt carries over
    // (timeouts, waste) is heartbeated where it changes. The beat goes on while the reply is
    // stored: a slow store write must not look like a lost worker (and cost a second model call).
    let call = adopted;
    const stop = () => call?.abort();
    ctx.cancellationSignal.addEventListener('abort', stop);
    const attempt = ctx.info.attempt + (earlier?.attempts ?? 0);
    try {
      return await withHeartbeat(async () => {
        // The wait the endpoint asked of the local attempt before this activity (its retries wait in Temporal).
        const pause = adopted ? 0 : await waitAsAsked(input, ctx, progress, beat);
        call ??= await start(input, ctx, progress, pause);
        // A retry says so at once (the attempt it is, where it goes), not a third of the heartbeat timeout in.
        if (earlier || ctx.info.attempt > 1) beat();
        if (ctx.cancellationSignal.aborted) stop();
        call.onChunk = beat;
        return await finish(call, ctx, beat);
      }, beat);
    } catch (err) {
      throw activityFailure(err, { attempt, activityAttempt: ctx.info.attempt, elapsedMs: Date.now() - ctx.info.scheduledTimestampMs, ...(input.retry ? { retry: input.retry } : {}) }, progress, beat);
    } finally {
      ctx.cancellationSignal.removeEventListener('abort', stop);
    }
  };
}

/** A permanent configuration problem (e.g. no API key on the worker). */
export function modelNotConfigured(message: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(message, 'MODEL_NOT_CONFIGURED');
}

/** Chains the reply after the conversation and returns what the workflow keeps of it. */
async function storeReply(input: ModelCallInput, reply: ModelReply, draft: Draft, deps: CallModelDeps): Promise<ModelReply> {
  const conversations = deps.conversations!;
  const calls = withCallIds(reply.toolCalls, input.callIdPrefix ?? `c${input.callIndex}`);
  const assistant: ChatMessage = { role: 'assistant', content: reply.content, ...(calls.length ? { tool_calls: calls } : {}) };
  const after = await conversations.commit(input.sessionId, draft, [assistant]);
  const put = (text: string) => conversations.putText(input.sessionId, text);
  return {
    ...reply,
    content: contentView(reply.content, calls.length > 0),
    toolCalls: deps.registry ? await callsView(calls, deps.registry, put) : calls,
    conversation: {
      head: after.head,
      pending: [],
      count: after.messages.length,
      tokens: after.messages.reduce((n, m) => n + messageTokens(m), 0),
    },
  };
}
