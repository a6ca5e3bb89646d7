/**
 * Our trace spans as OpenTelemetry spans, with the attributes two kinds of viewers read: the
 * OpenTelemetry GenAI semantic conventions (`gen_ai.*`: invoke_agent, chat, execute_tool) and
 * OpenInference (`openinference.span.kind`, `llm.*`, `tool.*`, `input.value` …), which Arize
 * Phoenix uses to draw an agent trace. Ids, times and status are ours, so an exported trace
 * matches `harness trace --json` span for span. Nothing is added that the span does not hold:
 * without `--full` no message text leaves, only what history keeps.
 *
 * Spans still running are left out, as an OpenTelemetry SDK exports a span only once it ends:
 * with our stable ids, a span sent while running would stay that way in a receiver that keeps
 * the first copy of a span id (Phoenix does), while leaving it out lets a later export add it
 * whole. Its ended children go now and link to it when it arrives.
 */
import { SpanKind, SpanStatusCode, TraceFlags, type Attributes, type AttributeValue, type SpanContext } from '@opentelemetry/api';
import { hrTimeDuration, millisToHrTime } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import type { Span } from './types';

/**
 * GenAI attribute names. They are still "incubating" in @opentelemetry/semantic-conventions,
 * whose README asks users to copy them rather than import that entry point (it may break in a
 * minor release).
 */
const GEN_AI = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  // Deprecated in favour of gen_ai.provider.name, but still the one many backends read.
  system: 'gen_ai.system',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  /** Of the input tokens, those the provider's prompt cache served. */
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
} as const;

/** The agent's name in `gen_ai.agent.name` and OpenInference's `agent.name`. */
const AGENT_NAME = 'harness';

/** Where a span came from: the instrumentation scope of every exported span. */
const SCOPE = { name: 'durable-agent-harness/trace' };

type Kind = 'AGENT' | 'CHAIN' | 'LLM' | 'TOOL';

/** Converts the spans that have ended to ReadableSpans for an exporter. */
export function toOtelSpans(spans: readonly Span[], resource: Resource): ReadableSpan[] {
  const byId = new Map(spans.map((s) => [s.span_id, s]));
  // OTLP needs both times: a span history did not time takes the nearest time its ancestors have.
  const fallback = (s: Span): number => {
    for (let p = byId.get(s.parent_id ?? ''); p; p = byId.get(p.parent_id ?? '')) {
      const t = parseTime(p.start) ?? parseTime(p.end);
      if (t !== undefined) return t;
    }
    return Date.now();
  };
  return spans.filter((s) => s.status !== 'running').map((s) => toOtelSpan(s, resource, fallback));
}

function toOtelSpan(s: Span, resource: Resource, fallback: (s: Span) => number): ReadableSpan {
  const start = parseTime(s.start) ?? parseTime(s.end) ?? fallback(s);
  const end = Math.max(start, parseTime(s.end) ?? start);
  const startTime = millisToHrTime(start);
  const endTime = millisToHrTime(end);
  const context: SpanContext = { traceId: s.trace_id, spanId: s.span_id, traceFlags: TraceFlags.SAMPLED };
  return {
    name: spanName(s),
    kind: s.type === 'llm_call' ? SpanKind.CLIENT : SpanKind.INTERNAL,
    spanContext: () => context,
    ...(s.parent_id ? { parentSpanContext: { traceId: s.trace_id, spanId: s.parent_id, traceFlags: TraceFlags.SAMPLED, isRemote: false } } : {}),
    startTime,
    endTime,
    duration: hrTimeDuration(startTime, endTime),
    status: s.status === 'ok' ? { code: SpanStatusCode.OK } : { code: SpanStatusCode.ERROR, message: s.error ?? 'failed' },
    attributes: spanAttributes(s),
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** GenAI span names: `invoke_agent <turn>`, `chat <model>`, `execute_tool <tool>`; ours otherwise. */
function spanName(s: Span): string {
  if (s.type === 'turn') return `invoke_agent ${s.name}`;
  if (s.type === 'llm_call') return `chat ${modelOf(s.input.model).model ?? s.name}`;
  if (s.type === 'tool_call') return `execute_tool ${s.name}`;
  return s.name;
}

/** Every attribute of a span: shared ones, then those of its type. */
function spanAttributes(s: Span): Attributes {
  const a: Record<string, AttributeValue | undefined> = {
    'openinference.span.kind': KINDS[s.type],
    'session.id': s.session_id,
    [GEN_AI.conversationId]: s.session_id,
    'harness.span.type': s.type,
    'harness.status': s.status,
    'harness.source': s.source,
    'input.value': JSON.stringify(s.input),
    'input.mime_type': 'application/json',
    ...(s.output !== null ? { 'output.value': JSON.stringify(s.output), 'output.mime_type': 'application/json' } : {}),
    ...(s.status === 'error' ? { [ATTR_ERROR_TYPE]: str(s.output?.error_type) ?? '_OTHER' } : {}),
    ...BY_TYPE[s.type](s),
  };
  return Object.fromEntries(Object.entries(a).filter((e): e is [string, AttributeValue] => e[1] !== undefined));
}

const KINDS: Record<Span['type'], Kind> = {
  turn: 'AGENT',
  step: 'CHAIN',
  llm_call: 'LLM',
  tool_call: 'TOOL',
  compress: 'CHAIN',
  approval: 'CHAIN',
  ask_user: 'CHAIN',
  budget: 'CHAIN',
  wait: 'CHAIN',
  message: 'CHAIN',
};

type Attrs = Record<string, AttributeValue | undefined>;

const BY_TYPE: Record<Span['type'], (s: Span) => Attrs> = {
  turn: turnAttributes,
  step: (s) => ({ 'harness.step': num(s.input.step) }),
  llm_call: llmAttributes,
  tool_call: toolAttributes,
  compress: (s) => ({ 'harness.step': num(s.input.step), 'harness.compress.before_tokens': num(s.output?.before_tokens), 'harness.compress.after_tokens': num(s.output?.after_tokens) }),
  approval: (s) => ({
    [GEN_AI.toolCallId]: str(s.input.call_id),
    'harness.approval.approved': bool(s.output?.approved),
    'harness.approval.by': str(s.output?.by),
    'harness.approval.timed_out': bool(s.output?.timed_out),
  }),
  ask_user: (s) => ({ [GEN_AI.toolCallId]: str(s.input.call_id), 'harness.answer.by': str(s.output?.by) }),
  message: (s) => ({ 'harness.message.mode': str(s.input.mode) }),
  wait: (s) => ({ [GEN_AI.toolCallId]: str(s.input.call_id), 'harness.wait.until': str(s.input.until), 'harness.wait.woken': bool(s.output?.woken), 'harness.wait.by': str(s.output?.by) }),
  budget: (s) => ({
    'harness.budget.scope': str(s.input.scope),
    'harness.budget.unit': str(s.input.unit),
    'harness.budget.limit': num(s.input.limit),
    'harness.budget.spent': num(s.input.spent),
    'harness.budget.decision': str(s.output?.decision),
    'harness.budget.by': str(s.output?.by),
  }),
};

/** The turn: one agent invocation (the session is the conversation). */
function turnAttributes(s: Span): Attrs {
  const { provider, model } = modelOf(s.input.model);
  const usage = usageOf(s.output?.usage);
  return {
    [GEN_AI.operation]: 'invoke_agent',
    [GEN_AI.agentName]: AGENT_NAME,
    'agent.name': AGENT_NAME,
    [GEN_AI.provider]: provider,
    [GEN_AI.requestModel]: model,
    // GenAI allows usage on invoke_agent; OpenInference's llm.token_count stays on LLM spans,
    // since Phoenix sums those up the tree and would count a turn's tokens twice.
    [GEN_AI.inputTokens]: usage?.prompt,
    [GEN_AI.outputTokens]: usage?.completion,
    'harness.turn': num(s.input.turn),
    'harness.terminated_by': str(s.output?.terminated_by),
    // The turn's whole cost by the ledger (its calls, compressions and wasted attempts); not llm.cost.*,
    // which viewers sum up the tree from the LLM spans.
    'harness.cost.total_usd': num(obj(s.output?.cost).usd),
    'harness.cost.total_tokens': num(obj(s.output?.cost).total_tokens),
    'harness.cost.retry_waste_usd': num(obj(obj(s.output?.cost).retry_waste).usd),
  };
}

/** A model call: request model and provider from the session config, the reply's model and usage. */
function llmAttributes(s: Span): Attrs {
  const { provider, model } = modelOf(s.input.model);
  const usage = usageOf(s.output?.usage);
  const responseModel = str(s.output?.model);
  return {
    [GEN_AI.operation]: 'chat',
    [GEN_AI.provider]: provider,
    [GEN_AI.system]: provider,
    [GEN_AI.requestModel]: model,
    [GEN_AI.responseModel]: responseModel,
    [GEN_AI.inputTokens]: usage?.prompt,
    [GEN_AI.outputTokens]: usage?.completion,
    [GEN_AI.cacheReadTokens]: usage?.cached || undefined,
    'llm.model_name': responseModel ?? model,
    'llm.provider': provider,
    'llm.system': provider,
    'llm.token_count.prompt': usage?.prompt,
    'llm.token_count.completion': usage?.completion,
    'llm.token_count.total': usage?.total,
    'llm.token_count.prompt_details.cache_read': usage?.cached || undefined,
    ...costAttributes(obj(s.output?.cost)),
    'harness.step': num(s.input.step),
    'harness.attempts': num(s.output?.attempts),
    // The whole request when the payloads were read for export (`context`), else what it added.
    ...inputMessages(s.input.context ?? s.input.messages),
    ...outputMessage(s.output),
  };
}

/** A tool call: the GenAI and OpenInference tool attributes, and the policy's verdict. */
function toolAttributes(s: Span): Attrs {
  const policy = (s.input.policy ?? {}) as Record<string, unknown>;
  const approval = (s.output?.approval ?? {}) as Record<string, unknown>;
  return {
    [GEN_AI.operation]: 'execute_tool',
    [GEN_AI.toolName]: s.name,
    [GEN_AI.toolCallId]: str(s.input.call_id),
    [GEN_AI.toolType]: 'function',
    'tool.name': s.name,
    'tool.id': str(s.input.call_id),
    'harness.step': num(s.input.step),
    'harness.tool.risk': str(s.input.risk),
    'harness.policy.decision': str(policy.decision),
    'harness.policy.rule': str(policy.rule),
    'harness.approval.approved': bool(approval.approved),
  };
}

/** The messages a request added, as OpenInference input messages (present with `--full` only). */
function inputMessages(messages: unknown): Attrs {
  if (!Array.isArray(messages)) return {};
  const out: Attrs = {};
  messages.forEach((m: Record<string, unknown>, i) => {
    const p = `llm.input_messages.${i}.message`;
    out[`${p}.role`] = str(m?.role);
    out[`${p}.content`] = typeof m?.content === 'string' ? m.content : undefined;
    out[`${p}.tool_call_id`] = str(m?.tool_call_id);
    Object.assign(out, toolCalls(`${p}.tool_calls`, m?.tool_calls));
  });
  return out;
}

/** The reply as one OpenInference output message: its text and the calls it asked for. */
function outputMessage(output: Span['output']): Attrs {
  if (!output || !('content' in output || 'tool_calls' in output)) return {};
  const p = 'llm.output_messages.0.message';
  return { [`${p}.role`]: 'assistant', [`${p}.content`]: str(output.content), ...toolCalls(`${p}.tool_calls`, output.tool_calls) };
}

function toolCalls(prefix: string, calls: unknown): Attrs {
  if (!Array.isArray(calls)) return {};
  const out: Attrs = {};
  calls.forEach((c: { id?: unknown; name?: unknown; arguments?: unknown }, i) => {
    const p = `${prefix}.${i}.tool_call`;
    out[`${p}.id`] = str(c?.id);
    out[`${p}.function.name`] = str(c?.name);
    out[`${p}.function.arguments`] = typeof c?.arguments === 'string' ? c.arguments : JSON.stringify(c?.arguments ?? {});
  });
  return out;
}

/** `openai:gpt-4o-mini` → provider and model (the trace names a model `provider:model`). */
function modelOf(value: unknown): { provider?: string; model?: string } {
  if (typeof value !== 'string' || !value) return {};
  const i = value.indexOf(':');
  return i < 0 ? { model: value } : { provider: value.slice(0, i), model: value.slice(i + 1) };
}

function usageOf(value: unknown): { prompt?: number; completion?: number; total?: number; cached?: number } | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const u = value as Record<string, unknown>;
  return { prompt: num(u.prompt_tokens), completion: num(u.completion_tokens), total: num(u.total_tokens), cached: num(u.cached_tokens) };
}

/** A model call's cost in USD as OpenInference names it (the reply's), and what its failed attempts wasted. */
function costAttributes(cost: Record<string, unknown>): Attrs {
  return {
    'llm.cost.prompt': num(cost.prompt_usd),
    'llm.cost.completion': num(cost.completion_usd),
    'llm.cost.total': num(cost.usd),
    'harness.cost.retry_waste_usd': num(cost.wasted_usd),
    'harness.attempts.failed': num(cost.failed_attempts),
  };
}

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});

function parseTime(value: string | null): number | undefined {
  const ms = value === null ? NaN : Date.parse(value);
  return Number.isFinite(ms) ? ms : undefined;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const bool = (v: unknown): boolean | undefined => (typeof v === 'boolean' ? v : undefined);
