/**
 * The `remember` tool on the turn's working memory. Working memory is in every step's system
 * message, the turn's result and the session's state: a model remembering 64 facts of 2,000
 * characters a step made the model call's input pass Temporal's 2 MB payload limit, and every
 * attempt of that workflow task failed (PayloadsTooLarge) forever. Pure and deterministic.
 */
import { toolError, toolOk } from '../deterministic/errors';
import type { ToolResult } from '../deterministic/types';
// How far working memory may grow (MAX_MEMORY_CHARS) is replay-relevant: replay-constants.ts.
import { MAX_MEMORY_CHARS } from './turn/replay-constants';

/** Stores (or, with an empty value, forgets) a fact; bounded, refuses to grow memory past MAX_MEMORY_CHARS. */
export function rememberFact(memory: Record<string, string>, key: string, value: string, bounded: boolean): ToolResult {
  if (value === '') {
    delete memory[key];
    return toolOk({ remembered: key });
  }
  if (bounded) {
    const size = Object.entries(memory).reduce((n, [k, v]) => n + k.length + v.length, 0);
    const old = Object.prototype.hasOwnProperty.call(memory, key) ? key.length + memory[key]!.length : 0;
    const next = size - old + key.length + value.length;
    if (next > MAX_MEMORY_CHARS && next > size) {
      return toolError('MEMORY_FULL', `Working memory is full: it would hold ${next} characters, more than ${MAX_MEMORY_CHARS}.`, {
        suggestion: 'Forget facts no longer needed (remember the key with an empty value), shorten them, or save them with remember_longterm.',
      });
    }
  }
  // Defined, not assigned: assigning to a key named `__proto__` would silently store nothing.
  if (bounded) Object.defineProperty(memory, key, { value, enumerable: true, writable: true, configurable: true });
  else memory[key] = value;
  return toolOk({ remembered: key });
}
