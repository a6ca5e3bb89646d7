/**
 * Script files for the scripted model: a fixed sequence of assistant turns (plus optional
 * expectations and injected faults) that the scripted OpenAI-compatible server replays.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { z } from 'zod';
import { JsonSyntaxError, parseJsonText } from '../deterministic/json-text';

/** One tool call the scripted assistant makes; object arguments are JSON-stringified, strings are sent raw. */
export const ScriptToolCallSchema = z.strictObject({
  name: z.string().min(1),
  // A raw string lets scripts send malformed JSON on purpose to exercise argument validation.
  arguments: z.union([z.record(z.string(), z.unknown()), z.string()], {
    error: 'expected an object (sent JSON-stringified) or a string (sent raw)',
  }),
  id: z.string().min(1).optional(),
});

/** Conditions the incoming request must meet before the step is answered. */
const ScriptExpectSchema = z.strictObject({
  last_message_contains: z.string().optional(),
  messages_contain: z.string().optional(),
  system_contains: z.string().optional(),
  tools_include: z.union([z.string(), z.array(z.string())]).optional(),
});

/** An injected failure: the first `times` requests of the step are delayed and/or answered with `status`. */
const ScriptFaultSchema = z.strictObject({
  status: z.number().int().min(400).max(599).optional(),
  // No zod default so a Script literal in code need not spell it out; the server treats absent as 1.
  times: z.number().int().min(0).optional(),
  delay_ms: z.number().int().min(0).optional(),
  message: z.string().optional(),
  /** Tokens the failed request used, reported in the error object as some providers do (the ledger counts them as waste). */
  usage: z.strictObject({ prompt_tokens: z.number().int().min(0), completion_tokens: z.number().int().min(0) }).optional(),
});

/** A reply to a correction (text mode, a cut or empty reply): what the model writes on its next try. */
const ScriptReplySchema = z
  .strictObject({
    content: z.string().optional(),
    tool_calls: z.array(ScriptToolCallSchema).optional(),
  })
  .refine((s) => s.content !== undefined || (s.tool_calls !== undefined && s.tool_calls.length > 0), {
    message: 'a reply needs "content" or a non-empty "tool_calls"',
  });

/** One scripted assistant turn. */
const ScriptStepSchema = z
  .strictObject({
    content: z.string().optional(),
    tool_calls: z.array(ScriptToolCallSchema).optional(),
    expect: ScriptExpectSchema.optional(),
    fault: ScriptFaultSchema.optional(),
    // The replies to the harness's corrections of this step, in order (the step itself again when none is left).
    corrected: z.array(ScriptReplySchema).optional(),
  })
  .refine((s) => s.content !== undefined || (s.tool_calls !== undefined && s.tool_calls.length > 0), {
    message: 'a step needs "content" or a non-empty "tool_calls"',
  });

/** A whole script file. */
export const ScriptSchema = z.strictObject({
  steps: z.array(ScriptStepSchema),
  // Canned answers for compression calls, which never consume steps.
  summaries: z.array(z.string()).optional(),
});

/** A parsed, validated script. */
export type Script = z.infer<typeof ScriptSchema>;
/** One step of a parsed script. */
export type ScriptStep = Script['steps'][number];
/** A step's expectations. */
type ScriptExpect = z.infer<typeof ScriptExpectSchema>;
/** One tool call of a parsed script step. */
export type ScriptToolCall = z.infer<typeof ScriptToolCallSchema>;

/** A script that could not be read or validated; the message is one line naming the source. */
export class ScriptError extends Error {
  override name = 'ScriptError';
}

/** Validates an already-parsed JSON value as a script; `source` (usually a path) prefixes error messages. */
export function parseScript(value: unknown, source: string): Script {
  const result = ScriptSchema.safeParse(value);
  if (result.success) return result.data;
  const [first, ...rest] = result.error.issues;
  const path = first.path.length > 0 ? first.path.map(String).join('.') : '(root)';
  const message = first.message.replace(/^Invalid input: /, '');
  const more = rest.length > 0 ? ` (and ${rest.length} more problem${rest.length > 1 ? 's' : ''})` : '';
  throw new ScriptError(`${source}: ${path}: ${message}${more}`);
}

/**
 * Largest script file. A session carries its script in its start input until the script is in
 * the message store, and Temporal refuses a payload over 2 MB: 1 MiB leaves the other half for
 * the rest of the session's configuration (a longer script failed at start as "Temporal is
 * overloaded" and was retried for minutes).
 */
export const MAX_SCRIPT_BYTES = 1024 * 1024;

/** Reads and validates a script file; errors name the place, never quote the file (it may be any file). */
export function loadScript(path: string): Script {
  const text = readScriptFile(path);
  let value: unknown;
  try {
    value = parseJsonText(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) throw new ScriptError(`${path}: ${err.message}`);
    throw err;
  }
  return parseScript(value, path);
}

/** The file's text: a regular file of at most MAX_SCRIPT_BYTES (a FIFO or a device would never end). */
function readScriptFile(path: string): string {
  let fd: number;
  try {
    // Non-blocking: opening a FIFO would otherwise wait for a writer (regular files read as usual).
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'file not found' : `cannot read file (${code ?? String(err)})`;
    throw new ScriptError(`${path}: ${why}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new ScriptError(`${path}: not a regular file`);
    if (stat.size > MAX_SCRIPT_BYTES) throw tooLarge(path, stat.size);
    // Read up to one byte past the limit: a file that grew since fstat is refused too.
    const buf = Buffer.alloc(MAX_SCRIPT_BYTES + 1);
    let n = 0;
    for (let got = 1; got > 0 && n < buf.length; n += got) got = readSync(fd, buf, n, buf.length - n, n);
    if (n > MAX_SCRIPT_BYTES) throw tooLarge(path, n);
    return buf.subarray(0, n).toString('utf8');
  } catch (err) {
    if (err instanceof ScriptError) throw err;
    throw new ScriptError(`${path}: cannot read file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  } finally {
    closeSync(fd);
  }
}

function tooLarge(path: string, size: number): ScriptError {
  return new ScriptError(
    `${path}: the script is ${size} bytes; a script may be at most ${MAX_SCRIPT_BYTES} bytes (1 MiB: it travels in the session's start input, which Temporal caps at 2 MB)`,
  );
}

// What `expect` means against an OpenAI chat request body (kept here, next to the schema).

/** Describes each expectation the request body fails (empty when all are met). */
export function unmetExpectations(expect: ScriptExpect, body: Record<string, unknown>): string[] {
  const messages = body.messages as unknown[];
  const unmet: string[] = [];
  const q = (s: string) => JSON.stringify(s);
  const clip = (s: string) => q(s.length > 200 ? `${s.slice(0, 200)}...` : s);
  if (expect.last_message_contains !== undefined) {
    const last = contentText(lastOfConversation(messages));
    if (!last.includes(expect.last_message_contains)) {
      unmet.push(`last message does not contain ${q(expect.last_message_contains)} (last message: ${clip(last)})`);
    }
  }
  if (expect.messages_contain !== undefined && !messages.some((m) => messageText(m).includes(expect.messages_contain!))) {
    unmet.push(`no message contains ${q(expect.messages_contain)} (${messages.length} messages)`);
  }
  if (expect.system_contains !== undefined) {
    const system = messages.filter((m) => ['system', 'developer'].includes(role(m))).map(contentText).join('\n');
    if (!system.includes(expect.system_contains)) {
      const found = system ? `system message: ${clip(system)}` : 'no system message';
      unmet.push(`system message does not contain ${q(expect.system_contains)} (${found})`);
    }
  }
  if (expect.tools_include !== undefined) {
    const tools = Array.isArray(body.tools) ? body.tools : [];
    const names = tools.map((t: unknown) => String(obj(obj(t).function).name ?? obj(t).name ?? ''));
    const missing = [expect.tools_include].flat().filter((n) => !names.includes(n));
    if (missing.length > 0) {
      unmet.push(`tools do not include ${missing.map(q).join(', ')} (tools: ${names.join(', ') || 'none'})`);
    }
  }
  return unmet;
}

/**
 * The conversation's last message: system messages after it are the harness's notes (memory, sent
 * after the conversation so the prefix stays cached), not a message of the conversation.
 */
function lastOfConversation(messages: unknown[]): unknown {
  let i = messages.length - 1;
  while (i > 0 && ['system', 'developer'].includes(role(messages[i]))) i--;
  return messages[i];
}

function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
}

function role(m: unknown): string {
  return String(obj(m).role ?? '');
}

/** A message's text content; array content (text parts) is concatenated. */
export function contentText(m: unknown): string {
  const content = obj(m).content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof obj(p).text === 'string' ? obj(p).text : '')).join('');
  return '';
}

/** A message's content plus tool-call names and arguments (for `messages_contain` and token estimates). */
export function messageText(m: unknown): string {
  const calls = Array.isArray(obj(m).tool_calls) ? (obj(m).tool_calls as unknown[]) : [];
  const callText = calls.map((c) => `${String(obj(obj(c).function).name ?? '')} ${String(obj(obj(c).function).arguments ?? '')}`);
  return [contentText(m), ...callText].join('\n');
}
