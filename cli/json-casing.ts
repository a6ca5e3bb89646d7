/**
 * `--json` speaks snake_case on every command (`session_id`, `turn_count`, `call_id`), while the
 * TypeScript API keeps TypeScript's camelCase: our own objects are converted on the way out. What
 * is data keeps the keys it was written with: a call's arguments, working memory, a server's
 * requested schema, a span's input and output, a tool's result.
 */

/** Fields whose values are data, copied as they are. */
const DATA_FIELDS = new Set(['args', 'arguments', 'memory', 'requestedSchema', 'input', 'output', 'result', 'schema']);

/** `turnCount` → `turn_count`; a key already in snake_case stays. */
export function snakeCase(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** A copy of `value` with the keys of its objects in snake_case, data fields left as they are. */
export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[snakeCase(k)] = DATA_FIELDS.has(k) ? v : snakeKeys(v);
  return out;
}
