/**
 * A model's answer reduced to the shapes workflow code relies on, before anything stores or
 * returns it. A provider (or whatever sits in between) may send arguments as an object, a name
 * that is a number, content as an array of parts, usage as text, twenty thousand calls or a
 * megabyte of name. Workflow code reading such a reply threw (a failed workflow task, retried
 * forever) or ran for seconds; here, outside the sandbox, each becomes text and bounded.
 */
import type { ToolCall, Usage } from '../../deterministic/types';
import type { ModelAnswer } from './client';

/** Calls of one reply that are stored and run; the workflow tells the model about the rest. */
export const MAX_CALLS_PER_REPLY = 64;
/** A longer name is cut: no tool's name is longer than 64, and the name is echoed back in errors. */
const MAX_TOOL_NAME_CHARS = 256;
/** Why a text-mode call could not be read: the parser's own words, short. */
const MAX_INVALID_CHARS = 500;

/** The answer with text where text is expected and at most MAX_CALLS_PER_REPLY calls (`droppedCalls`: how many more there were). */
export function boundedAnswer(answer: ModelAnswer): ModelAnswer & { droppedCalls?: number } {
  const calls: unknown[] = Array.isArray(answer.toolCalls) ? answer.toolCalls : [];
  const kept = calls.slice(0, MAX_CALLS_PER_REPLY).map(toolCall);
  const usage = (answer.usage ?? {}) as Partial<Record<keyof Usage, unknown>>;
  return {
    content: contentText(answer.content),
    toolCalls: kept,
    usage: {
      prompt_tokens: count(usage.prompt_tokens),
      completion_tokens: count(usage.completion_tokens),
      total_tokens: count(usage.total_tokens),
      // Cached prompt tokens (priced lower), never more than the prompt.
      ...(count(usage.cached_tokens) ? { cached_tokens: Math.min(count(usage.cached_tokens), count(usage.prompt_tokens)) } : {}),
    },
    model: typeof answer.model === 'string' ? answer.model : text(answer.model ?? ''),
    ...(calls.length > kept.length ? { droppedCalls: calls.length - kept.length } : {}),
  };
}

function toolCall(raw: unknown): ToolCall {
  const c = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const name = typeof c.name === 'string' ? c.name : text(c.name ?? '');
  return {
    id: typeof c.id === 'string' ? c.id : '',
    name: name.length > MAX_TOOL_NAME_CHARS ? `${name.slice(0, MAX_TOOL_NAME_CHARS)}…` : name,
    arguments: argumentsText(c.arguments),
    ...(typeof c.invalid === 'string' ? { invalid: c.invalid.slice(0, MAX_INVALID_CHARS) } : {}),
  };
}

/** Arguments as JSON text: an object some providers send is written out; what cannot be is left invalid for the workflow to report. */
function argumentsText(args: unknown): string {
  if (typeof args === 'string') return args;
  if (args === undefined || args === null) return '';
  return typeof args === 'object' ? text(args) : String(args);
}

/** Content as text or null: parts' texts joined, anything else written out. */
function contentText(content: unknown): string | null {
  if (typeof content === 'string' || content === null || content === undefined) return content ?? null;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'string' ? p : typeof p?.text === 'string' ? p.text : '')).join('');
  return text(content);
}

/** Any value as text: JSON where it can be written so, else whatever String makes of it, else a mark. */
function text(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    try {
      return String(value);
    } catch {
      return '(a value that cannot be written as text)'; // nested past the stack, cyclic, hostile toString
    }
  }
}

function count(n: unknown): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}
