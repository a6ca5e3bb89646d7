/**
 * A trace is a list of spans, one JSON line each with `--json`: a turn, its steps, and in each
 * step the model call, the compression and the tool calls, with approvals and questions under
 * their calls. Ids are stable hex derived from the session, turn, step and call, so tracing a
 * session and tracing one of its turns give the same ids (and an OTLP exporter can use them).
 */
import { createHash } from 'node:crypto';
import type { PendingMessage } from '../../deterministic/conversation';
import type { ChatMessage } from '../../deterministic/types';
import type { Timeline } from './timeline';

export type SpanType = 'turn' | 'step' | 'llm_call' | 'tool_call' | 'compress' | 'approval' | 'ask_user' | 'budget' | 'wait' | 'message';

/** `running`: not finished yet (or its worker died and none has picked it up again). */
export type SpanStatus = 'ok' | 'error' | 'running';

export interface Span {
  trace_id: string;
  session_id: string;
  span_id: string;
  parent_id: string | null;
  type: SpanType;
  name: string;
  /** ISO 8601 times from history events; `end` is null while the span is running. */
  start: string | null;
  end: string | null;
  duration_ms: number | null;
  status: SpanStatus;
  /** Tool calls: where the tool comes from (`local`, `skill`, `mcp:<server>`). */
  source?: string;
  input: Record<string, unknown>;
  output: Record<string, unknown> | null;
  error: string | null;
}

/** What `--full` reads from the message store for a span: history names these by hash. */
export type PayloadRefs =
  | {
      kind: 'llm_call';
      /** The messages this request added (inline or by hash), or, before the store, the whole request. */
      pending?: PendingMessage[];
      inline?: ChatMessage[];
      system?: { hash: string; text?: string };
      /** The step's memory, sent after the conversation (by reference, its text when it changed). */
      notes?: { hash: string; text?: string };
      /** The conversation head after the reply: its last message is the reply, whole. */
      replyHead?: string;
    }
  | {
      kind: 'tool_call';
      /** Arguments as history holds them (large payloads as `{$blob, bytes, preview}`). */
      args?: unknown;
      /** The stored tool message of a large result. */
      resultRef?: string;
    };

/** A span and what `--full` may add to it. */
export interface BuiltSpan {
  span: Span;
  refs?: PayloadRefs;
}

/** The trace id of a session: the first 32 hex digits of SHA-256 of its id. */
export function traceId(sessionId: string): string {
  return createHash('sha256').update(`session:${sessionId}`).digest('hex').slice(0, 32);
}

/** A span id from a stable key (turn id, step, call id …): 16 hex digits. */
function spanId(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** ISO time of a millisecond timestamp (null for none). */
export function iso(ms: number | undefined): string | null {
  return ms === undefined || !Number.isFinite(ms) ? null : new Date(ms).toISOString();
}

/** What every span of a turn shares. */
export interface TurnContext {
  traceId: string;
  sessionId: string;
  turnId: string;
  turn: number;
  timeline: Timeline;
  /** The turn has not closed: what has no outcome yet is still running. */
  running: boolean;
}

/** Makes a span of the turn; `key` names it stably within the turn. */
export function makeSpan(
  ctx: TurnContext,
  key: string,
  parentKey: string | null,
  fields: Omit<Span, 'trace_id' | 'session_id' | 'span_id' | 'parent_id' | 'start' | 'end' | 'duration_ms'> & { start?: number; end?: number },
): Span {
  const { start, end, type, name, status, source, input, output, error } = fields;
  const done = status !== 'running' && end !== undefined;
  return {
    trace_id: ctx.traceId,
    session_id: ctx.sessionId,
    span_id: spanId(key),
    parent_id: parentKey === null ? null : spanId(parentKey),
    type,
    name,
    start: iso(start),
    end: done ? iso(end) : null,
    duration_ms: done && start !== undefined ? Math.max(0, end! - start) : null,
    status,
    ...(source ? { source } : {}),
    input,
    output,
    error,
  };
}
