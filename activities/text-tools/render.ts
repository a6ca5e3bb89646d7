/**
 * The text protocol's side of a request: the tools described compactly in the system message,
 * and the conversation rewritten for an endpoint that has no tool calls (the harness keeps its
 * own record in the native shape: assistant `tool_calls` and `tool` messages). An assistant's
 * calls become the envelope it is asked to write, and each tool result a user message that
 * names its call, so the model sees its own past calls in the form it should use.
 */
import type { ChatMessage, ToolSpec } from '../../deterministic/types';

/** A tool's description is its first sentence, cut here: small models have small context windows (and read slowly on a CPU). */
const MAX_DESCRIPTION_CHARS = 160;

/** Tools that steer the turn rather than do work: listed last, since small models tend to take the first option they see. */
const STEERING = new Set(['finish', 'ask_user', 'remember']);

/** The tools in the order the model reads them (and the schema offers them): working tools first. */
export function orderForModel(tools: readonly ToolSpec[]): ToolSpec[] {
  return [...tools.filter((t) => !STEERING.has(t.name)), ...tools.filter((t) => STEERING.has(t.name))];
}

/** The protocol as the system message states it. */
function protocolText(tools: readonly ToolSpec[]): string {
  const ordered = orderForModel(tools);
  return [
    '# Tools',
    'You can call these tools (name, arguments, what it does; "?" marks an optional argument):',
    ...ordered.map(toolLine),
    '',
    '# How to reply',
    'Reply with exactly one JSON object and nothing else.',
    'To call tools (one at a time is best): {"tool_calls": [{"name": "<tool name>", "arguments": {<arguments>}}]}',
    'To give your final answer: {"answer": "<your answer>"}',
    ...example(ordered),
    'Each tool result comes back in a message starting with "Tool result". Call a tool when the task needs one; answer when you have what you need.',
  ].join('\n');
}

/** One worked call: small models follow an example far better than a description. */
function example(tools: readonly ToolSpec[]): string[] {
  if (tools.some((t) => t.name === 'read_file')) return ['For example, to read a file: {"tool_calls": [{"name": "read_file", "arguments": {"path": "<the file\'s path>"}}]}'];
  const first = tools.find((t) => !STEERING.has(t.name));
  return first ? [`For example: {"tool_calls": [{"name": ${JSON.stringify(first.name)}, "arguments": {...}}]}`] : [];
}

/** One line per tool: `- read_file(path: string, offset?: integer) — Reads …`. */
function toolLine(t: ToolSpec): string {
  const description = t.description.replace(/\s+/g, ' ').trim();
  const sentence = /^.+?[.!?](?=\s|$)/.exec(description)?.[0] ?? description;
  const short = sentence.length > MAX_DESCRIPTION_CHARS ? `${sentence.slice(0, MAX_DESCRIPTION_CHARS)}…` : sentence;
  return `- ${t.name}(${signature(t.parameters)}) — ${short}`;
}

/** The arguments of a JSON schema object as `name: type` pairs. */
function signature(schema: Record<string, unknown>): string {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.entries(props)
    .map(([name, s]) => `${name}${required.has(name) ? '' : '?'}: ${typeName(s, 0)}`)
    .join(', ');
}

function typeName(s: Record<string, unknown> | undefined, depth: number): string {
  if (!s || typeof s !== 'object') return 'any';
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if ('const' in s) return JSON.stringify(s.const);
  const union = (s.anyOf ?? s.oneOf) as Record<string, unknown>[] | undefined;
  if (Array.isArray(union)) return union.map((u) => typeName(u, depth + 1)).join(' | ');
  const type = Array.isArray(s.type) ? (s.type as string[]).join(' | ') : (s.type as string | undefined);
  if (type === 'array') return `${typeName(s.items as Record<string, unknown>, depth + 1)}[]`;
  if (type === 'object' && s.properties && depth < 2) return `{${signature(s)}}`;
  return type ?? 'any';
}

/**
 * The conversation as a text-mode endpoint gets it: the protocol appended to the system message,
 * calls written as the envelope, results as user messages (consecutive ones merged: some chat
 * templates insist that user and assistant alternate).
 */
export function textModeMessages(messages: readonly ChatMessage[], tools: readonly ToolSpec[]): ChatMessage[] {
  const protocol = protocolText(tools);
  const names = new Map<string, string>();
  const out: ChatMessage[] = [];
  const push = (m: ChatMessage) => {
    const last = out[out.length - 1];
    if (m.role === 'user' && last?.role === 'user') out[out.length - 1] = { role: 'user', content: `${last.content}\n\n${m.content}` };
    else out.push(m);
  };
  let system = false;
  for (const m of messages) {
    if (m.role === 'system') {
      // A later system message (the step's memory, after the conversation) is read as the user's:
      // templates of text-mode models often refuse a system message anywhere but first.
      push(system ? { role: 'user', content: m.content } : { role: 'system', content: `${m.content}\n\n${protocol}` });
      system = true;
    } else if (m.role === 'assistant') {
      const calls = m.tool_calls ?? [];
      for (const c of calls) names.set(c.id, c.name);
      // A reply that could not be read stays as written: the error that follows quotes it.
      const readable = calls.length > 0 && !calls.some((c) => c.invalid !== undefined);
      push({ role: 'assistant', content: readable ? envelope(calls) : m.content ?? '' });
    } else if (m.role === 'tool') {
      push({ role: 'user', content: `Tool result (${names.get(m.tool_call_id) ?? 'tool'}, call ${m.tool_call_id}):\n${m.content}` });
    } else {
      push(m);
    }
  }
  if (!system) out.unshift({ role: 'system', content: protocol });
  return out;
}

/** Calls as the envelope the model is asked to write (arguments that are not JSON stay text). */
function envelope(calls: readonly { name: string; arguments: string }[]): string {
  return JSON.stringify({
    tool_calls: calls.map((c) => ({ name: c.name, arguments: parseOr(c.arguments) })),
  });
}

function parseOr(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** The short message a malformed reply gets, before the model tries again. */
export function correctionText(problem: string): string {
  return (
    `Your last reply could not be used: ${problem}. Reply again with only one JSON object: ` +
    '{"tool_calls": [{"name": "<tool name>", "arguments": {...}}]} to call tools, or {"answer": "<text>"} to answer.'
  );
}
