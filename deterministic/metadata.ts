/**
 * Session metadata: JSON the application attaches when it starts a session (a user id, a
 * tenant …). It is part of the session's config, so every turn, continue-as-new and replay sees
 * the same value, and it reaches custom tools as `ctx.metadata`; it is never put into the
 * model's messages. Bounded, because it travels in every turn's input and every custom tool call.
 */

/** A JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Session metadata: a JSON object. */
export type SessionMetadata = Record<string, JsonValue>;

/** At most this many bytes of UTF-8 JSON: it rides in every turn input and custom tool call. */
export const MAX_METADATA_BYTES = 16 * 1024;

/** Deepest nesting accepted (as for tool arguments: far below any stack limit of the code that walks it). */
const MAX_METADATA_DEPTH = 64;

/**
 * Why a value is not session metadata (a plain object of JSON values, at most MAX_METADATA_BYTES
 * as JSON), in a few words naming the first bad place (`metadata.user.joined`); undefined when it is.
 */
export function metadataProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return `metadata must be a plain JSON object (it is ${kindOf(value)})`;
  const problem = jsonProblem(value, 'metadata', 0, new Set());
  if (problem) return problem;
  const bytes = new TextEncoder().encode(JSON.stringify(value)).length;
  if (bytes > MAX_METADATA_BYTES) return `metadata is ${bytes} bytes of JSON; at most ${MAX_METADATA_BYTES / 1024} KiB is accepted`;
  return undefined;
}

function jsonProblem(value: unknown, at: string, depth: number, seen: Set<object>): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : `${at} is ${value}, which JSON cannot hold`;
  if (typeof value !== 'object') return `${at} is ${kindOf(value)}, which is not JSON`;
  if (depth >= MAX_METADATA_DEPTH) return `${at} nests deeper than ${MAX_METADATA_DEPTH} levels`;
  if (seen.has(value)) return `${at} refers back to itself (a cycle is not JSON)`;
  if (!Array.isArray(value) && !isPlainObject(value)) return `${at} is ${kindOf(value)}, which is not JSON (use strings, numbers, booleans, null, arrays and plain objects)`;
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const p = jsonProblem(value[i], `${at}[${i}]`, depth + 1, seen);
        if (p) return p;
      }
      return undefined;
    }
    for (const [key, v] of Object.entries(value)) {
      const p = jsonProblem(v, `${at}.${key}`, depth + 1, seen);
      if (p) return p;
    }
    return undefined;
  } finally {
    seen.delete(value);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null)?.constructor?.name;
    return name ? `a ${name}` : 'an object';
  }
  if (typeof value === 'undefined') return 'undefined';
  return `a ${typeof value}`;
}
