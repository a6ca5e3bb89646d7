/**
 * Plain data shapes shared by workflows, activities and the CLI.
 * Everything here must be JSON-serialisable: it travels through Temporal history.
 */
import type { ToolErrorType } from './errors';

/**
 * A tool call as the model proposed it; `arguments` is the raw JSON text the model produced.
 * `id` is the harness's own id (unique per turn, step and call: decisions and answers are keyed
 * by it); `providerId` is the id the provider gave, sent back only to the provider.
 */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
  providerId?: string;
  /** Arguments the model activity stored and replaced by references (BlobArg) in `arguments`. */
  storedArgs?: string[];
  /** A text-mode reply that could not be read as a call, after the corrections allowed: why (the workflow answers INVALID_TOOL_CALL). */
  invalid?: string;
}

/** One chat message in OpenAI chat-completions shape (the lingua franca of compatible endpoints). */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** Token usage, summed per call, turn and session. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Prompt tokens the provider served from its cache (part of prompt_tokens), when it says. */
  cached_tokens?: number;
}

/** The single result shape of every tool, serialised into the tool message the model sees. */
export interface ToolResult {
  ok: boolean;
  result?: unknown;
  error_type?: ToolErrorType;
  message?: string;
  recoverable?: boolean;
  suggestion?: string;
}

/** Risk levels drive the permission policy. */
export type Risk = 'read_only' | 'write' | 'network' | 'dangerous';

/** Where a tool's implementation lives. */
export type ToolSource = 'local' | 'skill' | 'custom' | 'agent' | `mcp:${string}`;

/** The tool as the model and the trace see it: JSON schema instead of zod. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  risk: Risk;
  source: ToolSource;
  timeoutMs: number;
}
