/**
 * Compaction of large tool results. The assistant/tool structure stays as it is (same
 * tool_call_id), only the tool message's content becomes a compact record: tool and target
 * (path, command, url), original size, structure lines, head and tail snippets. PURE and
 * deterministic (workflow-safe). A record is always shorter than what it replaces.
 */
import type { ChatMessage, ToolCall } from '../types';

/** First line of every compacted record (also how an already compacted result is recognised). */
export const COMPACTED_MARK = '[compacted tool result]';

/** Options of compaction (sizes in characters). */
interface CompactOptions {
  /** Tool results longer than this are compacted. */
  minChars: number;
  /** Upper bound on one record; clamped below minChars so a record never grows a message. */
  maxRecordChars: number;
}

/** What happened to one tool result. */
export interface CompactedRecord {
  tool_call_id: string;
  tool: string;
  target: string;
  original_chars: number;
  compacted_chars: number;
}

/** Result of compacting a message list. */
interface CompactResult {
  messages: ChatMessage[];
  compacted: CompactedRecord[];
}

// Language-agnostic structure patterns: headings, imports, definitions.
const HEADING = /^#{1,6}\s+\S/;
const IMPORT = /^\s*(?:import\s|from\s+[\w.]+\s+import\s|#include\s|using\s+[\w.]+\s*;|use\s+[\w:]+|package\s+[\w.]+|(?:const|let|var)\s+[\w{},\s]+=\s*require\()/;
const DEFINITION =
  /^\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\([\w ]+\))?\s+)?(?:public\s+|private\s+|protected\s+|static\s+|abstract\s+|final\s+|declare\s+)*(?:async\s+)?(?:class|interface|type|enum|function\*?|def|fn|func|struct|trait|impl|module|namespace|record)\s+[\w$]/;
const ARROW = /^\s*(?:export\s+)?(?:const|let|var)\s+[\w$]+\s*(?::[^=]+)?=\s*(?:async\s+)?(?:\([^)]*\)|[\w$]+)\s*(?::[^=]+)?=>/;
const METHOD = /^\s+(?:(?:public|private|protected|static|async|override|readonly|get|set)\s+)*(?!if\b|for\b|while\b|switch\b|catch\b|return\b|function\b)[A-Za-z_$][\w$]*\s*(?:<[^>]*>)?\([^)]*\)\s*(?::\s*[^{;=]+)?\{\s*$/;

/** Lines that show a text's shape, as "line: text" (each at most 120 characters). */
export function structureLines(text: string): string[] {
  const out: string[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\s+$/, '');
    if (HEADING.test(line) || IMPORT.test(line) || DEFINITION.test(line) || ARROW.test(line) || METHOD.test(line)) {
      out.push(`${i + 1}: ${clip(line, 120)}`);
    }
  }
  return out;
}

/** The text inside a tool message: a ToolResult's content/stdout/… when it is one, else the raw content. */
export function toolText(content: string): { text: string; ok?: boolean; fields: Record<string, unknown> } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return { text: content, fields: {} };
  }
  if (!parsed || typeof parsed !== 'object') return { text: content, fields: {} };
  const top = parsed as Record<string, unknown>;
  const ok = typeof top.ok === 'boolean' ? top.ok : undefined;
  const result = top.result;
  if (typeof result === 'string') return { text: result, ok, fields: {} };
  if (result && typeof result === 'object') {
    const r = result as Record<string, unknown>;
    const parts = ['content', 'stdout', 'stderr', 'body', 'output', 'text'].filter((k) => typeof r[k] === 'string' && r[k] !== '');
    if (parts.length) {
      const text = parts.map((k) => (parts.length > 1 ? `[${k}]\n${String(r[k])}` : String(r[k]))).join('\n');
      const fields = Object.fromEntries(Object.entries(r).filter(([k, v]) => !parts.includes(k) && (typeof v !== 'object' || v === null)));
      return { text, ok, fields };
    }
  }
  return { text: content, ok, fields: {} };
}

/** A short description of what a call acted on (path, command, url, …). */
function callTarget(call: ToolCall | undefined): string {
  if (!call) return '';
  try {
    const args = JSON.parse(call.arguments) as Record<string, unknown>;
    for (const key of ['path', 'file', 'command', 'cmd', 'url', 'query', 'name']) {
      if (typeof args[key] === 'string') return `${key}=${clip(String(args[key]), 200)}`;
    }
  } catch {
    // raw arguments below
  }
  return clip(call.arguments, 200);
}

/** Cuts text to at most `max` characters, keeping its head and tail around a marker. */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = `\n…[truncated ${text.length} chars]…\n`;
  if (max <= marker.length + 2) return text.slice(0, Math.max(0, max));
  const room = max - marker.length;
  const head = Math.ceil(room * 0.7);
  return text.slice(0, head) + marker + text.slice(text.length - (room - head));
}

/** Builds the compact record of one tool result; always shorter than `content` when content.length > minChars. */
export function compactRecord(content: string, call: ToolCall | undefined, opts: CompactOptions): string {
  const max = Math.max(0, Math.min(opts.maxRecordChars, opts.minChars - 1, content.length - 1));
  const { text, ok, fields } = toolText(content);
  const lineCount = text.split('\n').length;
  const extra = Object.entries(fields)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
  const header = [
    `${COMPACTED_MARK} ${call?.name ?? 'tool'} ${callTarget(call)}`.trimEnd(),
    `original: ${content.length} chars, ${lineCount} lines${ok === undefined ? '' : `, ok=${ok}`}${extra ? `; ${clip(extra, 200)}` : ''}`,
  ].join('\n');
  const room = max - header.length;
  const headSnippet = Math.max(0, Math.min(400, Math.floor(room * 0.25)));
  const tailSnippet = Math.max(0, Math.min(200, Math.floor(room * 0.12)));
  const structRoom = room - headSnippet - tailSnippet - 40;
  const struct = structureLines(text);
  // Top-level lines (imports, headings, outer definitions) first, then nested ones; shown in file order.
  const picked = new Set<number>();
  let used = 0;
  for (const nested of [false, true]) {
    struct.forEach((line, i) => {
      if (/^\d+: \s/.test(line) !== nested || used + line.length + 1 > structRoom) return;
      picked.add(i);
      used += line.length + 1;
    });
  }
  const shown = struct.filter((_, i) => picked.has(i));
  const parts = [header];
  if (shown.length) parts.push(`structure (${shown.length} of ${struct.length} lines):\n${shown.join('\n')}`);
  if (headSnippet > 0) parts.push(`head:\n${text.slice(0, headSnippet)}`);
  if (tailSnippet > 0 && text.length > headSnippet + tailSnippet) parts.push(`tail:\n${text.slice(text.length - tailSnippet)}`);
  const record = parts.join('\n');
  // Never grow: a record over budget is cut hard.
  return record.length <= max ? record : record.slice(0, max);
}

/**
 * Compacts tool results longer than `minChars` (not compacted yet), oldest first; the
 * assistant/tool structure and ids are kept. With `enough`, stops as soon as it says the
 * messages are small enough, so recent results stay verbatim when older ones suffice.
 */
export function compactToolResults(
  messages: readonly ChatMessage[],
  opts: CompactOptions,
  enough?: (messages: readonly ChatMessage[]) => boolean,
): CompactResult {
  const calls = new Map<string, ToolCall>();
  const compacted: CompactedRecord[] = [];
  const out = [...messages];
  for (let i = 0; i < out.length; i++) {
    const m = out[i];
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) calls.set(c.id, c);
    if (m.role !== 'tool' || m.content.length <= opts.minChars || m.content.startsWith(COMPACTED_MARK)) continue;
    const call = calls.get(m.tool_call_id);
    const content = compactRecord(m.content, call, opts);
    if (content.length >= m.content.length) continue;
    out[i] = { ...m, content };
    compacted.push({
      tool_call_id: m.tool_call_id,
      tool: call?.name ?? 'tool',
      target: callTarget(call),
      original_chars: m.content.length,
      compacted_chars: content.length,
    });
    if (enough?.(out)) break;
  }
  return { messages: out, compacted };
}

function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}
