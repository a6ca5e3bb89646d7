/**
 * Input and output of the compressContext activity, shared by the workflow (as types) and
 * the worker. JSON-serialisable: both travel through Temporal history, so the trace shows
 * tokens before and after, messages summarised and tool results compacted.
 */
import type { ModelRef } from '../session-config';
import type { ConversationRef, SystemRef } from '../conversation';
import type { ChatMessage, Usage } from '../types';
import type { CompactedRecord } from './compact';
import type { CompressionConfig } from './plan';

/** What compressContext needs (without the model plumbing). */
export interface CompressRequest {
  messages: ChatMessage[];
  /** Model name: picks the tokenizer. */
  model: string;
  config: CompressionConfig;
  /** Date written into the summary marker, e.g. "2025-06-01" (the caller's clock, not ours). */
  date: string;
  /** Compress even when under the threshold (tests, a manual `/compact`). */
  force?: boolean;
}

/** The activity's input: a request plus what the model call needs. */
export interface CompressContextInput extends Omit<CompressRequest, 'model' | 'date' | 'messages'> {
  /** The whole context, system message first: turns recorded before the message store. */
  messages?: ChatMessage[];
  /** The conversation by reference, and the system message (with the message store). */
  conversation?: Pick<ConversationRef, 'head' | 'pending'>;
  system?: SystemRef;
  sessionId: string;
  turnId: string;
  step: number;
  /** Same counter as model calls, so a retried compression is recognisable. */
  callIndex: number;
  model: ModelRef;
  /** Defaults to the activity's current UTC date. */
  date?: string;
}

/** What compression did; `messages` replaces the context for the next model call. */
export interface CompressResult {
  messages: ChatMessage[];
  /** False when nothing changed (under the threshold, or no variant was smaller). */
  compressed: boolean;
  before_tokens: number;
  after_tokens: number;
  before_chars: number;
  after_chars: number;
  limit_tokens: number;
  /** Messages replaced by the summary (0 when no summary was made). */
  summarized_messages: number;
  /** Tool results replaced by compact records. */
  compacted_tool_results: number;
  /** Messages cut hard because compaction and summary were not enough. */
  truncated_messages: number;
  compacted: CompactedRecord[];
  /** Usage of the summarising model call, when one was made (set by the activity). */
  summary_usage?: Usage;
  /** The activity attempt that made it (the ones before failed; set by the activity). */
  attempt?: number;
}

/** What the compressContext activity returns: the messages (before the message store) or the new conversation reference. */
export type CompressContextResult = Omit<CompressResult, 'messages'> & { messages?: ChatMessage[]; conversation?: ConversationRef };
