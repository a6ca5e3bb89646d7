/** Token usage arithmetic: the totals turns and sessions keep of their model calls. */
import type { Usage } from './types';

/** Zero usage. */
export const NO_USAGE: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

/** a − b, never below zero (a turn's usage taken back out of the session's totals). */
export function subtractUsage(a: Usage, b: Usage): Usage {
  return {
    prompt_tokens: Math.max(0, a.prompt_tokens - b.prompt_tokens),
    completion_tokens: Math.max(0, a.completion_tokens - b.completion_tokens),
    total_tokens: Math.max(0, a.total_tokens - b.total_tokens),
  };
}

/** Sums two usages. */
export function addUsage(a: Usage, b: Usage): Usage {
  const cached = (a.cached_tokens ?? 0) + (b.cached_tokens ?? 0);
  return {
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    // Only when a provider reported cached tokens, so usages recorded before stay as they were.
    ...(cached ? { cached_tokens: cached } : {}),
  };
}
