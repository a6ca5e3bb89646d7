/**
 * Reads a text-mode reply: the tool calls or the answer a model wrote as text, tolerantly. Open
 * models write calls in many shapes — the envelope we ask for, a bare `{"name", "arguments"}`,
 * OpenAI's `{"function": {...}}`, `<tool_call>` tags (Hermes, Qwen and SmolLM templates), a
 * fenced block, a JSON object after a sentence — so each shape is read rather than corrected.
 * What looks like a call but cannot be read is `malformed` (the model gets a correction); text
 * with no sign of a call is an answer. The reply is untrusted: everything here is bounded.
 */

/** A call read from text: arguments as JSON text (the workflow parses and validates them). */
interface TextCall {
  name: string;
  arguments: string;
}

/** What a reply says. */
type TextReply =
  | { kind: 'calls'; calls: TextCall[]; text: string | null }
  | { kind: 'answer'; text: string }
  | { kind: 'malformed'; problem: string; name?: string };

/** Text past this is not searched for calls (a reply is bounded by limits.maxOutputTokens anyway). */
const MAX_SCAN_CHARS = 200_000;
/** JSON starts tried per reply: a long reply full of braces costs a bounded amount. */
const MAX_STARTS = 32;
const ANSWER_KEYS = ['answer', 'final_answer', 'response', 'final'];
const NAME_KEYS = ['name', 'tool', 'tool_name', 'function_name'];
const ARG_KEYS = ['arguments', 'args', 'parameters', 'input', 'params'];
const CALL_TAGS = /<(tool_call|function_call|tool_calls)>([\s\S]*?)(?:<\/\1>|$)/gi;
const FENCED = /```[a-zA-Z]*\s*\n?([\s\S]*?)```/g;

/** Reads a reply's text; `known` are the tools offered (a bare `{"name": ...}` counts as a call only for one of them). */
export function parseTextReply(reply: string, known: ReadonlySet<string> = new Set()): TextReply {
  const text = reply.length > MAX_SCAN_CHARS ? reply.slice(0, MAX_SCAN_CHARS) : reply;
  const trimmed = text.trim();
  if (trimmed === '') return { kind: 'malformed', problem: 'the reply was empty' };

  // <tool_call> blocks: each holds one call (or a list); several blocks are several calls.
  const tagged = [...trimmed.matchAll(CALL_TAGS)].map((m) => m[2]!.trim()).filter(Boolean);
  if (tagged.length) {
    const calls: TextCall[] = [];
    for (const block of tagged) {
      const read = readCalls(firstJson(block)?.value, known);
      if (!read.ok) return { kind: 'malformed', problem: `a <tool_call> block could not be read: ${read.problem}`, ...(read.name ? { name: read.name } : {}) };
      calls.push(...read.calls);
    }
    return { kind: 'calls', calls, text: outside(trimmed, CALL_TAGS) };
  }

  const candidates = [trimmed, ...[...trimmed.matchAll(FENCED)].map((m) => m[1]!.trim())];
  for (const candidate of candidates) {
    const found = firstJson(candidate);
    if (found === undefined) continue;
    // A reply that opens as JSON but holds valid JSON only further in was cut or broken: a
    // fragment of it (an arguments object) is not the call.
    if (found.start > 0 && /^[{[]/.test(candidate) && looksLikeCall(candidate)) break;
    const answer = answerOf(found.value);
    if (answer !== undefined) return { kind: 'answer', text: answer };
    const read = readCalls(found.value, known);
    if (read.ok) return { kind: 'calls', calls: read.calls, text: before(trimmed, candidate, found.start) };
    // JSON that is neither an answer nor a call: in a fenced block or a sentence it may be the
    // answer's own content (a user asked for JSON); as the whole reply it is a misformed envelope.
    if (candidate === trimmed && looksLikeCall(trimmed)) return { kind: 'malformed', problem: read.problem, ...(read.name ? { name: read.name } : {}) };
  }
  if (looksLikeCall(trimmed)) return { kind: 'malformed', problem: 'it looks like a tool call, but it is not valid JSON', ...nameHint(trimmed) };
  return { kind: 'answer', text: trimmed };
}

/**
 * The complete calls of an envelope cut off at the output cap (`{"tool_calls": [{…}, {…}, {"na`):
 * the calls before the cut were written whole, so they run and the model need not write them
 * again. Empty when there is no envelope or no complete call in it.
 */
export function salvageCalls(reply: string, known: ReadonlySet<string> = new Set()): TextCall[] {
  const text = reply.length > MAX_SCAN_CHARS ? reply.slice(0, MAX_SCAN_CHARS) : reply;
  const at = /"tool_calls"\s*:\s*\[/.exec(text);
  if (!at) return [];
  const calls: TextCall[] = [];
  let i = at.index + at[0].length;
  while (calls.length < MAX_STARTS) {
    while (i < text.length && /[\s,]/.test(text[i]!)) i++;
    if (text[i] !== '{') break;
    const end = balancedEnd(text, i);
    if (end < 0) break;
    const call = oneCall(parseLenient(text.slice(i, end + 1)), known, true);
    if ('problem' in call) break;
    calls.push(call);
    i = end + 1;
  }
  return calls;
}

type Read = { ok: true; calls: TextCall[] } | { ok: false; problem: string; name?: string };

/** Calls from a parsed value: the envelope, one call, or a list of calls. */
function readCalls(value: unknown, known: ReadonlySet<string>): Read {
  if (value === undefined) return { ok: false, problem: 'it is not valid JSON' };
  if (Array.isArray(value)) return list(value, known, false);
  if (!isObject(value)) return { ok: false, problem: 'expected a JSON object with "tool_calls" or "answer"' };
  for (const key of ['tool_calls', 'tool_call', 'function_call', 'calls']) {
    if (key in value) {
      const v = value[key];
      return list(Array.isArray(v) ? v : [v], known, true);
    }
  }
  return list([value], known, false);
}

/** `enveloped`: the model said these are calls; otherwise an object must look like one (see oneCall). */
function list(items: unknown[], known: ReadonlySet<string>, enveloped: boolean): Read {
  if (items.length === 0) return { ok: false, problem: '"tool_calls" is empty: name at least one call, or reply {"answer": "..."}' };
  const calls: TextCall[] = [];
  for (const item of items) {
    const call = oneCall(item, known, enveloped);
    if ('problem' in call) return { ok: false, ...call };
    calls.push(call);
  }
  return { ok: true, calls };
}

function oneCall(item: unknown, known: ReadonlySet<string>, enveloped: boolean): TextCall | { problem: string; name?: string } {
  if (!isObject(item)) return { problem: 'each call must be an object {"name": ..., "arguments": {...}}' };
  // OpenAI's own shape, as some models echo it: {"type": "function", "function": {"name", "arguments"}}.
  const inner = isObject(item.function) ? item.function : item;
  const nameKey = NAME_KEYS.find((k) => typeof inner[k] === 'string' && (inner[k] as string).trim() !== '');
  if (!nameKey) return { problem: 'a call has no "name"' };
  const name = (inner[nameKey] as string).trim();
  const argKey = ARG_KEYS.find((k) => k in inner);
  // JSON in an answer ({"name": "Ada"}) is not a call: outside the envelope an object is one only
  // with arguments, or when it names a tool offered.
  if (!enveloped && argKey === undefined && inner === item && !known.has(name)) return { problem: `"${name.slice(0, 64)}" is not a tool` };
  const args = argKey === undefined ? {} : inner[argKey];
  // Arguments as an object are written out; a string is kept as written (the workflow reads it
  // and names what is wrong); anything else is not arguments.
  if (typeof args === 'string') return { name, arguments: args };
  if (args === null || isObject(args)) return { name, arguments: JSON.stringify(args ?? {}) };
  return { problem: `the arguments of ${JSON.stringify(name.slice(0, 64))} must be an object`, name };
}

/** The answer of `{"answer": "..."}` (and its common variants); undefined for anything else. */
function answerOf(value: unknown): string | undefined {
  if (!isObject(value)) return undefined;
  if (NAME_KEYS.some((k) => typeof value[k] === 'string') || 'tool_calls' in value) return undefined;
  const key = ANSWER_KEYS.find((k) => k in value);
  if (key === undefined) return undefined;
  const v = value[key];
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** The first JSON value in the text and where it starts: the whole text, else the first balanced object or list that parses. */
function firstJson(text: string): { value: unknown; start: number } | undefined {
  const whole = parseLenient(text);
  if (whole !== undefined) return { value: whole, start: 0 };
  let starts = 0;
  for (let i = 0; i < text.length && starts < MAX_STARTS; i++) {
    const ch = text[i];
    if (ch !== '{' && ch !== '[') continue;
    starts++;
    const end = balancedEnd(text, i);
    if (end < 0) continue;
    const value = parseLenient(text.slice(i, end + 1));
    if (value !== undefined && typeof value === 'object') return { value, start: i };
  }
  return undefined;
}

/** JSON.parse, then with trailing commas removed; undefined when neither parses. */
function parseLenient(text: string): unknown {
  const t = text.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return undefined;
  for (const attempt of [t, t.replace(/,\s*([}\]])/g, '$1')]) {
    try {
      return JSON.parse(attempt) as unknown;
    } catch {
      // try the next repair
    }
  }
  return undefined;
}

/** Index of the bracket closing the one at `start`, minding strings; -1 when it never closes. */
function balancedEnd(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') stack.push(ch === '{' ? '}' : ']');
    else if (ch === '}' || ch === ']') {
      if (stack.pop() !== ch) return -1;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

/** Whether text is meant as a call: the envelope's keys or a call tag. */
function looksLikeCall(text: string): boolean {
  return /"(tool_calls|tool_call|function_call)"\s*:/.test(text) || /<tool_call>|<function_call>/i.test(text) || /^\s*[{[][\s\S]*"(name|tool)"\s*:/.test(text);
}

function nameHint(text: string): { name?: string } {
  const m = /"(?:name|tool)"\s*:\s*"([^"]{1,64})"/.exec(text);
  return m ? { name: m[1]! } : {};
}

/** The text around the call tags, or null when there is none. */
function outside(text: string, tags: RegExp): string | null {
  const rest = text.replace(tags, '').trim();
  return rest === '' ? null : rest;
}

/** The text before a call found inside a longer reply (a sentence the model wrote first), or null. */
function before(text: string, candidate: string, start: number): string | null {
  const at = candidate === text ? start : text.indexOf(candidate) + start;
  const head = (at > 0 ? text.slice(0, at) : '').replace(/```[a-zA-Z]*\s*$/, '').trim();
  return head === '' ? null : head;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
