/**
 * Bounds checked on model-written text before workflow code walks it. JSON.parse is iterative,
 * but what follows it recurses once per level (zod, canonical JSON for digests, payload
 * conversion): arguments nested 100,000 deep overflowed the stack and failed the workflow task,
 * which Temporal retries forever. Pure, linear, no recursion: safe in workflow code.
 */

/** Deepest nesting of arrays and objects accepted in tool arguments: beyond any real tool's, far below any stack limit. */
export const MAX_ARGS_DEPTH = 64;

/**
 * Values all the tool calls of one reply may hold together (array elements and object members,
 * about). Each pass over an object of 175,000 keys (parse, validate, digest, record, schedule)
 * costs V8 about half a second, and a reply of 2 MB can hold that many: a step's passes then
 * took seconds of one workflow task. 20,000 keeps them to tens of milliseconds.
 */
export const MAX_STEP_VALUES = 20_000;

/**
 * The shape of JSON text in one linear pass without recursion (strings skipped): whether arrays
 * and objects nest deeper than `maxDepth` (the scan stops there), and about how many values it
 * holds (one, plus one per opening bracket and comma).
 */
export function scanJson(text: string, maxDepth: number): { tooDeep: boolean; values: number } {
  let depth = 0;
  let values = 1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character (a quote included)
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x2c) values++;
    else if (c === 0x5b || c === 0x7b) {
      values++;
      if (++depth > maxDepth) return { tooDeep: true, values };
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return { tooDeep: false, values };
}

/** A text cut to `max` characters with a mark saying how long it was: model text echoed back stays small. */
export function clipText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}
