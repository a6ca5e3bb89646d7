/** The callModel activity: one chat-completions call, heartbeating while it waits. */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { ModelCallInput, ModelReply } from '../common/activity-types';
import type { ChatMessage, ToolSpec, Usage } from '../common/types';
import { withCallIds } from '../common/call-ids';
import type { ToolRegistry } from '../common/tools';
import { messageTokens, type Conversations, type Draft } from './store/conversations';
import { callsView, contentView } from './store/views';
import { requestContext } from './store/request';
import type { ModelClient } from './model-client';
import { boundedAnswer } from './model-reply';
import { attemptBudgetMs, endpointLabel, modelTimeout, toModelFailure } from './model-errors';
import { callDeciding, inMode, type ToolModeCache } from './model-auto';
import { exchange, type Exchanged } from './model-exchange';
import type { ToolModeDecision } from '../common/tool-mode';
import { addWaste, reportedUsage, withWaste } from './usage-waste';
import { StreamWriter, streamFile } from '../host/model-stream';

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
export interface ModelCallProgress {
  endpoint: string;
  timeouts: number;
  /** Tokens earlier attempts paid for without a usable reply (see usage-waste.ts). */
  wasted?: Usage;
}

/** What callModel needs beyond the model: the message store (turns that use it) and the tools. */
export interface CallModelDeps {
  conversations?: Conversations;
  registry?: ToolRegistry;
  /** The tool modes `auto` decided on this worker, by endpoint and model (default: one map per callModel). */
  toolModes?: ToolModeCache;
  /** HARNESS_HOME: stream replies' text to files under it as it arrives (host/model-stream.ts); unset: no streaming. */
  streams?: string;
}

/** A reasoning model's thinking is kept in history up to this many characters (the trace shows it). */
const MAX_REASONING_CHARS = 4_000;

/** Builds callModel over a resolver and a source of tool schemas. */
export function createCallModel(resolve: ModelResolver, toolSpecs: (input: ModelCallInput) => Promise<ToolSpec[]> | ToolSpec[], deps: CallModelDeps = {}) {
  const toolModes: ToolModeCache = deps.toolModes ?? new Map();
  return async function callModel(input: ModelCallInput): Promise<ModelReply> {
    const ctx = Context.current();
    const { client, endpoint } = await resolve(input);
    const before = ctx.info.heartbeatDetails as Partial<ModelCallProgress> | undefined;
    const progress: ModelCallProgress = { endpoint: endpointLabel(endpoint), timeouts: Number(before?.timeouts) || 0, ...(before?.wasted ? { wasted: before.wasted } : {}) };
    // Heartbeats let Temporal notice a dead worker long before the call's own timeout (the
    // heartbeat timeout is seconds: limits.modelHeartbeatMs); they go on until the reply is
    // stored: on a timer while the call waits for its first byte, and with every chunk of a
    // streamed reply. The first is a third of the timeout in, not at once: the timeout counts
    // from the start anyway, and a call shorter than that costs the server no heartbeat (a
    // round trip and a write of the activity's state). The progress an attempt carries over
    // (timeouts, waste) is heartbeated where it changes.
    const beat = setInterval(() => ctx.heartbeat(progress), Math.max(100, (ctx.info.heartbeatTimeoutMs ?? 10_000) / 3));
    let context: Awaited<ReturnType<typeof requestContext>>;
    let tools: ToolSpec[];
    try {
      context = await requestContext(input, deps.conversations);
      tools = await toolSpecs(input);
    } catch (err) {
      clearInterval(beat);
      throw err;
    }
    // Our own deadline, inside Temporal's start-to-close: the failure then names the endpoint
    // instead of being Temporal's anonymous "activity StartToClose timeout".
    const budgetMs = attemptBudgetMs(ctx.info.startToCloseTimeoutMs);
    const deadline = new AbortController();
    const timer = budgetMs === undefined ? undefined : setTimeout(() => deadline.abort(), budgetMs);
    const started = Date.now();
    // Native calls of a turn stream their text to the side channel; each chunk is a heartbeat too.
    const native = (input.toolMode?.mode ?? 'native') === 'native' && !input.decideToolMode;
    const stream = deps.streams && input.purpose !== 'compress' && native ? new StreamWriter(streamFile(deps.streams, input.turnId, input.step, input.callIndex)) : undefined;
    let reply: ModelReply;
    try {
      const req = {
        model: input.model.model,
        messages: context.messages,
        tools,
        headers: {
          'x-harness-session': input.sessionId,
          'x-harness-call-index': String(input.callIndex),
          'x-harness-purpose': input.purpose ?? 'turn',
        },
        signal: AbortSignal.any([ctx.cancellationSignal, deadline.signal]),
        ...(input.maxOutputTokens ? { maxOutputTokens: input.maxOutputTokens } : {}),
        ...(stream
          ? {
              onText: (chunk: string) => {
                stream.write(chunk);
                ctx.heartbeat(progress);
              },
            }
          : {}),
      };
      const key = `${endpoint}|${input.model.model}`;
      let decided: ToolModeDecision | undefined;
      let done: Exchanged;
      if (input.decideToolMode && !input.toolMode) ({ exchanged: done, decided } = await callDeciding(client, req, key, toolModes));
      else if (input.toolMode) done = await inMode(client, req, input.toolMode, key, toolModes);
      else done = await exchange(client, req, { mode: 'native' }); // turns recorded before tool modes
      reply = { ...boundedAnswer(done.answer), ...replyNotes(done, input.toolMode ?? decided, decided), attempt: ctx.info.attempt, latencyMs: Date.now() - started };
    } catch (err) {
      clearInterval(beat);
      // Tokens the provider says this failed attempt used are paid for: the next attempt reads them here.
      progress.wasted = addWaste(progress.wasted, reportedUsage(err));
      if (deadline.signal.aborted && !ctx.cancellationSignal.aborted) {
        progress.timeouts += 1;
        ctx.heartbeat(progress); // the next attempt reads the count from here
        throw withWaste(modelTimeout(progress.endpoint, budgetMs!, progress.timeouts >= TIMED_OUT_ATTEMPTS ? progress.timeouts : undefined), progress.wasted, ctx.info.attempt);
      }
      if (progress.wasted) ctx.heartbeat(progress);
      throw withWaste(toModelFailure(err, progress.endpoint), progress.wasted, ctx.info.attempt);
    } finally {
      clearTimeout(timer);
      stream?.done();
    }
    // Outside the model's error handling: a store failure is the store's, not the model's. The
    // beat goes on while the reply is stored: with a heartbeat timeout of seconds, a slow store
    // write must not look like a lost worker (and cost a second model call).
    if (progress.wasted) reply = { ...reply, wasted: progress.wasted };
    try {
      return context.draft ? await storeReply(input, reply, context.draft, deps) : reply;
    } catch (err) {
      // The reply was paid for; the retry pays again.
      progress.wasted = addWaste(progress.wasted, reply.usage);
      ctx.heartbeat(progress);
      throw withWaste(err, progress.wasted, ctx.info.attempt);
    } finally {
      clearInterval(beat);
    }
  };
}

/** What history keeps of how the call went beyond its answer: the mode, corrections, a cut, estimated usage, reasoning. */
function replyNotes(done: Exchanged, mode: ToolModeDecision | undefined, decided: ToolModeDecision | undefined): Partial<ModelReply> {
  const a = done.answer;
  const reasoning = typeof a.reasoning === 'string' ? a.reasoning.slice(0, MAX_REASONING_CHARS) : undefined;
  return {
    ...(mode
      ? {
          protocol: {
            mode: mode.mode,
            ...(done.constrained !== undefined ? { constrained: done.constrained } : {}),
            ...(decided ? { decided } : {}),
            ...(done.corrections.length ? { corrections: done.corrections } : {}),
          },
        }
      : done.corrections.length
        ? { protocol: { mode: 'native' as const, corrections: done.corrections } }
        : {}),
    ...(done.truncated ? { truncated: true } : {}),
    ...(a.usageEstimated ? { usageEstimated: true } : {}),
    ...(reasoning ? { reasoning } : {}),
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
