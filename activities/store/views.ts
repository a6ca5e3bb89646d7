/**
 * What workflow code sees of large values once they are stored: a reply's tool calls with their
 * payload arguments replaced by references, a long thought cut to a preview, a large tool result
 * reduced to its verdict. The store keeps every value whole; the model gets it whole. These
 * bounds are what keeps a step's history the same size whatever the model writes.
 */
import type { ToolOutcome } from '../../deterministic/activity-types';
import type { BlobArg } from '../../deterministic/conversation';
import { isBlobArg } from '../../deterministic/conversation';
import type { ToolRegistry } from '../../deterministic/tools';
import type { ToolCall, ToolResult } from '../../deterministic/types';
import { messageTokens, type Conversations } from './conversations';

/** A payload argument longer than this is stored and referenced. */
export const BLOB_ARG_OVER = 1024;
/** Characters of a stored value shown in its place. */
const PREVIEW_CHARS = 120;
/** A reply's text beside tool calls (a thought) is cut to this in the workflow's view. */
export const THOUGHT_INLINE_MAX = 2000;
/** A tool result whose JSON is longer than this is stored; the workflow keeps its verdict. */
export const RESULT_INLINE_MAX = 1024;
/** Argument text that is not valid JSON is cut to this (the workflow only reports it invalid). */
export const MALFORMED_ARGS_MAX = 2048;
// A stored result's message and suggestion stay readable in the workflow's view.
const VERDICT_CHARS = 300;

/** The tool calls as the workflow sees them: large payload arguments stored and referenced. */
export async function callsView(calls: readonly ToolCall[], registry: ToolRegistry, put: (text: string) => Promise<string>): Promise<ToolCall[]> {
  const out: ToolCall[] = [];
  for (const call of calls) {
    const blobArgs = registry.get(call.name)?.blobArgs ?? [];
    let args: unknown;
    try {
      args = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch {
      out.push({ ...call, arguments: clip(call.arguments, MALFORMED_ARGS_MAX) });
      continue;
    }
    if (!args || typeof args !== 'object' || Array.isArray(args) || !blobArgs.length) {
      out.push(call);
      continue;
    }
    const view: Record<string, unknown> = { ...(args as Record<string, unknown>) };
    const stored: string[] = [];
    for (const name of blobArgs) {
      const value = view[name];
      if (typeof value !== 'string' || value.length <= BLOB_ARG_OVER) continue;
      const ref: BlobArg = { $blob: await put(value), bytes: Buffer.byteLength(value, 'utf8'), preview: value.slice(0, PREVIEW_CHARS) };
      view[name] = ref;
      stored.push(name);
    }
    // `storedArgs` says which references are ours: an object the model wrote itself is not one.
    out.push(stored.length ? { ...call, arguments: JSON.stringify(view), storedArgs: stored } : call);
  }
  return out;
}

/** A reply's text as the workflow sees it: whole for a final answer, a preview beside tool calls. */
export function contentView(content: string | null, hasCalls: boolean): string | null {
  return content !== null && hasCalls ? clip(content, THOUGHT_INLINE_MAX) : content;
}

/** Arguments with every stored payload read back, for the tool that runs them. */
export async function resolveArgs(args: unknown, get: (hash: string) => Promise<string>): Promise<unknown> {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return args;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args as Record<string, unknown>)) out[k] = isBlobArg(v) ? await get(v.$blob) : v;
  return out;
}

/**
 * A tool result as the workflow keeps it: small ones whole; a large one stored as the tool
 * message the model will read, and reduced to its verdict (ok, error type, message) here.
 */
export async function resultView(
  result: ToolResult,
  callId: string,
  sessionId: string,
  conversations: Conversations,
): Promise<ToolOutcome> {
  const content = JSON.stringify(result);
  if (content.length <= RESULT_INLINE_MAX) return result;
  const message = { role: 'tool' as const, tool_call_id: callId, content };
  const ref = await conversations.putMessage(sessionId, message);
  const { result: _dropped, ...verdict } = result;
  return {
    ...verdict,
    ...(verdict.message ? { message: clip(verdict.message, VERDICT_CHARS) } : {}),
    ...(verdict.suggestion ? { suggestion: clip(verdict.suggestion, VERDICT_CHARS) } : {}),
    stored: { ref, tokens: messageTokens(message) },
  };
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
