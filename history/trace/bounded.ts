/**
 * Values read from history and the message store, kept shallow enough for everything that
 * walks them after (JSON.stringify for `--json`, the console and OTLP, the renderer, the
 * policy's matchers): those recurse once per level and overflow the stack on text nesting
 * 100,000 deep, which a model or a server can write and history holds as it came. JSON.parse is
 * iterative, so text is parsed whole; what lies deeper than the limit is replaced by a mark
 * saying so. Every function here is linear in its input and never recurses on its depth.
 */
import { scanJson } from '../../deterministic/json-bounds';

/** Nesting shown of values the reader parses from text (a call's arguments): the workflow refuses arguments deeper than this. */
export const MAX_SHOWN_DEPTH = 64;

/**
 * Nesting kept of a decoded history payload or stored message: well above what the workflow
 * writes (an activity input holding arguments of MAX_SHOWN_DEPTH levels), far below any stack limit.
 */
export const MAX_PAYLOAD_DEPTH = 256;

/** What stands in for a value nested deeper than `max` levels. */
function deeperMark(max: number): string {
  return `[nested deeper than ${max} levels]`;
}

/**
 * JSON text as a value, arrays and objects deeper than `max` replaced by deeperMark(max). Text
 * that is not JSON throws, as JSON.parse does.
 */
export function parseBounded(text: string, max: number): unknown {
  const value: unknown = JSON.parse(text);
  return scanJson(text, max).tooDeep ? boundDepth(value, max) : value;
}

/** Whether JSON as UTF-8 bytes nests arrays and objects deeper than `max` (strings skipped). */
export function bytesNestDeeper(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  // In UTF-8 no byte of a multi-byte character is a quote, a backslash or a bracket.
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * A copy of a JSON value with every array and object below `max` levels replaced by
 * deeperMark(max); the value itself when it nests no deeper. Iterative: a value of any depth.
 */
export function boundDepth(value: unknown, max: number): unknown {
  if (!nestsDeeper(value, max)) return value;
  const mark = deeperMark(max);
  const root: { value?: unknown } = {};
  // Each frame: a source container, where its copy goes, and its depth (1 for the top).
  const stack: { from: unknown; into: Record<string | number, unknown>; key: string | number; depth: number }[] = [{ from: value, into: root, key: 'value', depth: 1 }];
  while (stack.length) {
    const { from, into, key, depth } = stack.pop()!;
    if (!isContainer(from)) {
      put(into, key, from);
      continue;
    }
    if (depth > max) {
      put(into, key, mark);
      continue;
    }
    if (Array.isArray(from)) {
      const copy: unknown[] = new Array(from.length);
      put(into, key, copy);
      for (let i = 0; i < from.length; i++) stack.push({ from: from[i], into: copy as unknown as Record<number, unknown>, key: i, depth: depth + 1 });
    } else {
      const copy: Record<string, unknown> = {};
      put(into, key, copy);
      const keys = Object.keys(from);
      // Every key now, in order: the copies fill them in later, in whatever order they come.
      for (const k of keys) put(copy, k, undefined);
      for (const k of keys) stack.push({ from: (from as Record<string, unknown>)[k], into: copy, key: k, depth: depth + 1 });
    }
  }
  return root.value;
}

/** An own property, whatever its name (`__proto__` from JSON is a key like any other). */
function put(into: Record<string | number, unknown>, key: string | number, value: unknown): void {
  Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Whether arrays and objects in `value` nest deeper than `max` (stops at the first that does). */
function nestsDeeper(value: unknown, max: number): boolean {
  if (!isContainer(value)) return false;
  const stack: { v: object; depth: number }[] = [{ v: value, depth: 1 }];
  while (stack.length) {
    const { v, depth } = stack.pop()!;
    if (depth > max) return true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const c of children) if (isContainer(c)) stack.push({ v: c, depth: depth + 1 });
  }
  return false;
}

function isContainer(v: unknown): v is object {
  return typeof v === 'object' && v !== null;
}
