/**
 * One turn as spans: the turn, its steps (by the step number model and compression calls
 * carry), and in each step the compression, the model call (attempts, failures, usage, the
 * calls it asked for or its answer) and the tool calls. A turn that still runs, or whose worker
 * died mid-step, gives every completed step in full and the rest as `running`.
 */
import type { ModelReply } from '../../deterministic/activity-types';
import type { CompressContextResult } from '../../deterministic/context/types';
import type { PendingMessage } from '../../deterministic/conversation';
import type { ChatMessage, ToolCall } from '../../deterministic/types';
import { callSpans, parseArgs } from './call-spans';
import { budgetSpans } from './budget-spans';
import { withSteerSpans } from './steers';
import type { ActivityItem, Timeline } from './timeline';
import { makeSpan, type BuiltSpan, type SpanStatus, type TurnContext } from './types';
import { describeToolMode } from '../../deterministic/tool-mode';
import { turnNumberOf } from '../../deterministic/turn-id';

/** Who sent the turn's message and when (the session's sendMessage update), when known. */
export interface SentBy {
  by: string;
  at: number;
}

/** Builds the spans of a turn from its timeline (readTimeline of its runs), the turn span first. */
export function buildTurnSpans(turnId: string, t: Timeline, opts: { traceId: string; sessionId: string; sent?: SentBy }): BuiltSpan[] {
  const turn = t.input?.turn ?? turnNumberOf(turnId);
  const ctx: TurnContext = { traceId: opts.traceId, sessionId: t.input?.sessionId ?? opts.sessionId, turnId, turn, timeline: t, running: !t.closed };
  // A step whose model call waited for its budget (and never came) is a step too.
  const budgetSteps = t.waits.filter((w) => w.pending.kind === 'budget').map((w) => w.step);
  const steps = [...new Set([...t.activities.filter(isStepActivity).map((a) => a.step), ...budgetSteps])].sort((a, b) => a - b);
  const body: BuiltSpan[] = [];
  for (const step of steps) body.push(...stepSpans(ctx, step));
  return [{ span: turnSpan(ctx, t, body, opts.sent) }, ...withSteerSpans(ctx, body)];
}

/** The turn's status while it waits on a person for this kind of item. */
const WAITING = { question: 'waiting_for_user', approvals: 'waiting_for_approval', budget: 'waiting_for_budget' } as const;

function isStepActivity(a: ActivityItem): boolean {
  return a.type === 'callModel' || a.type === 'compressContext';
}

const ms = (iso: string | null): number | undefined => (iso === null ? undefined : Date.parse(iso));

function turnSpan(ctx: TurnContext, t: Timeline, body: BuiltSpan[], sent: SentBy | undefined): BuiltSpan['span'] {
  const input = t.input;
  const result = t.closed?.result;
  const model = input?.config?.model;
  const stepSpans = body.filter((b) => b.span.type === 'step');
  const lastWait = t.waits[t.waits.length - 1];
  const waiting = ctx.running && lastWait && lastWait.endedAt === undefined && lastWait.timedOutAt === undefined ? lastWait.pending : undefined;
  let status: SpanStatus = 'running';
  if (t.closed) status = t.closed.status === 'completed' && result?.terminated_by !== 'failed' ? 'ok' : 'error';
  return makeSpan(ctx, ctx.turnId, null, {
    type: 'turn',
    name: ctx.turnId,
    start: t.startedAt,
    end: t.closed?.at,
    status,
    input: {
      turn: ctx.turn,
      user_message: input?.userMessage ?? null,
      ...(model ? { model: `${model.provider}:${model.model}` } : {}),
      ...(input?.maxSteps ? { max_steps: input.maxSteps } : {}),
      ...(sent ? { sent_by: sent.by, sent_at: new Date(sent.at).toISOString() } : {}),
    },
    output: {
      status: t.closed ? (t.closed.status === 'completed' ? 'completed' : t.closed.status) : waiting ? WAITING[waiting.kind] : 'running',
      ...(result
        ? {
            terminated_by: result.terminated_by,
            answer: result.answer,
            steps: result.steps,
            usage: result.usage,
            model_calls: result.modelCalls,
            ...(result.compressions?.length ? { compressions: result.compressions } : {}),
            // How the tools were offered (turns since tool modes): `text (constrained; probe: …)`.
            ...(result.toolMode ? { tool_mode: describeToolMode(result.toolMode) } : {}),
          }
        : { steps: stepSpans.length }),
      ...(waiting ? { pending: waiting } : {}),
      runs: t.runs,
    },
    error: t.closed ? (result?.error ?? t.closed.failure ?? null) : null,
  });
}

function stepSpans(ctx: TurnContext, step: number): BuiltSpan[] {
  const t = ctx.timeline;
  const stepKey = `${ctx.turnId}/step/${step}`;
  const children: BuiltSpan[] = [];
  const compressions = t.activities.filter((a) => a.type === 'compressContext' && a.step === step);
  const models = t.activities.filter((a) => a.type === 'callModel' && a.step === step);
  compressions.forEach((c, i) => children.push({ span: compressSpan(ctx, stepKey, c, i) }));
  children.push(...budgetSpans(ctx, step, stepKey));
  models.forEach((m, i) => children.push(llmSpan(ctx, stepKey, m, i)));
  const last = models[models.length - 1];
  const reply = last?.result as ModelReply | undefined;
  const calls: ToolCall[] = reply?.toolCalls ?? [];
  children.push(...callSpans(ctx, step, stepKey, calls, last?.closedAt));

  const starts = children.map((c) => ms(c.span.start)).filter((v): v is number => v !== undefined);
  const ends = children.map((c) => ms(c.span.end)).filter((v): v is number => v !== undefined);
  const running = children.some((c) => c.span.status === 'running');
  const failed = children.some((c) => c.span.type === 'llm_call' && c.span.status === 'error');
  const span = makeSpan(ctx, stepKey, ctx.turnId, {
    type: 'step',
    name: `step ${step}`,
    ...(starts.length ? { start: Math.min(...starts) } : {}),
    ...(ends.length ? { end: Math.max(...ends) } : {}),
    status: running ? 'running' : failed ? 'error' : 'ok',
    input: { step },
    output: running
      ? null
      : {
          tool_calls: calls.length,
          ...(reply && calls.length === 0 ? { answer: reply.content } : {}),
        },
    error: failed ? 'the model call failed' : null,
  });
  return [{ span }, ...children];
}

/** One model call: its request (what history holds of it), attempts, and reply. */
function llmSpan(ctx: TurnContext, stepKey: string, a: ActivityItem, index: number): BuiltSpan {
  const input = a.input as {
    step?: number;
    callIndex?: number;
    model?: { provider?: string; model?: string };
    tools?: string[];
    conversation?: { head?: string | null; pending?: PendingMessage[] };
    messages?: ChatMessage[];
    system?: { hash: string; text?: string };
    notes?: { hash: string; text?: string };
  };
  const reply = a.result as ModelReply | undefined;
  const attempts = a.attempt ?? reply?.attempt;
  const status: SpanStatus = reply ? 'ok' : a.failure !== undefined ? 'error' : ctx.running ? 'running' : 'error';
  const pending = input.conversation?.pending ?? [];
  const span = makeSpan(ctx, `${stepKey}/llm${index ? `/${index}` : ''}`, stepKey, {
    type: 'llm_call',
    name: input.model?.model ?? 'model',
    start: a.scheduledAt,
    end: a.closedAt,
    status,
    input: {
      step: input.step,
      call_index: input.callIndex,
      model: input.model ? `${input.model.provider}:${input.model.model}` : undefined,
      tools: input.tools ?? [],
      // What this request added to the conversation (its whole context lives in the message store).
      new_messages: input.messages ? input.messages.length : pending.length,
      ...(input.conversation?.head !== undefined ? { conversation_head: input.conversation.head } : {}),
      ...(input.system?.text !== undefined ? { system_changed: true } : {}),
    },
    output:
      status === 'running'
        ? { attempts: attempts ?? null, ...(a.lastFailure ? { last_failure: a.lastFailure } : {}) }
        : {
            attempts: attempts ?? null,
            ...(a.lastFailure ? { last_failure: a.lastFailure } : {}),
            ...(reply
              ? {
                  content: reply.content,
                  tool_calls: reply.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: parseArgs(c.arguments) })),
                  usage: reply.usage,
                  model: reply.model,
                  latency_ms: reply.latencyMs,
                  ...(reply.conversation ? { messages_in_context: reply.conversation.count } : {}),
                  ...protocolView(reply),
                }
              : {}),
            ...(a.identity ? { worker: a.identity } : {}),
          },
    error: a.failure ?? (status === 'error' ? 'no result in history' : null),
  });
  return {
    span,
    refs: {
      kind: 'llm_call',
      ...(input.conversation ? { pending: input.conversation.pending ?? [] } : {}),
      ...(input.messages ? { inline: input.messages } : {}),
      ...(input.system ? { system: input.system } : {}),
      ...(input.notes ? { notes: input.notes } : {}),
      ...(reply?.conversation?.head ? { replyHead: reply.conversation.head } : {}),
    },
  };
}

/** How a model call offered the tools and what it took: mode, auto's decision, corrections, a cut, estimated usage, reasoning. */
function protocolView(reply: ModelReply): Record<string, unknown> {
  const p = reply.protocol;
  return {
    ...(p ? { tool_mode: p.mode, ...(p.constrained !== undefined ? { constrained: p.constrained } : {}) } : {}),
    ...(p?.decided ? { tool_mode_decided: describeToolMode(p.decided) } : {}),
    ...(p?.corrections?.length ? { corrections: p.corrections } : {}),
    ...(reply.truncated ? { truncated: true } : {}),
    ...(reply.usageEstimated ? { usage_estimated: true } : {}),
    ...(reply.reasoning ? { reasoning: reply.reasoning } : {}),
  };
}

/** One compression: tokens before and after, what was summarised and compacted. */
function compressSpan(ctx: TurnContext, stepKey: string, a: ActivityItem, index: number): BuiltSpan['span'] {
  const r = a.result as CompressContextResult | undefined;
  const input = a.input as { step?: number; callIndex?: number; config?: unknown; force?: boolean };
  const status: SpanStatus = r ? 'ok' : a.failure !== undefined ? 'error' : ctx.running ? 'running' : 'error';
  return makeSpan(ctx, `${stepKey}/compress${index ? `/${index}` : ''}`, stepKey, {
    type: 'compress',
    name: 'compressContext',
    start: a.scheduledAt,
    end: a.closedAt,
    status,
    input: { step: input.step, call_index: input.callIndex, config: input.config, ...(input.force ? { force: true } : {}) },
    output: r
      ? {
          compressed: r.compressed,
          before_tokens: r.before_tokens,
          after_tokens: r.after_tokens,
          limit_tokens: r.limit_tokens,
          summarized_messages: r.summarized_messages,
          compacted_tool_results: r.compacted_tool_results,
          truncated_messages: r.truncated_messages,
          ...(r.compacted?.length ? { compacted: r.compacted } : {}),
          ...(r.summary_usage ? { summary_usage: r.summary_usage } : {}),
          attempts: a.attempt ?? 1,
        }
      : a.lastFailure
        ? { attempts: a.attempt ?? null, last_failure: a.lastFailure }
        : null,
    // A failed compression is not a failed turn: the turn went on with the full context.
    error: a.failure ?? (status === 'error' ? 'no result in history' : null),
  });
}
