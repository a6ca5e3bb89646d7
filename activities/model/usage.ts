/**
 * Usage as a provider reports it, and an estimate for replies whose provider sent none (some llama.cpp builds, proxies, streaming
 * gateways): counted with a real BPE tokenizer, so budgets and reports keep a realistic number
 * instead of zero. The reply says the counts are estimated. The tokenizer's work is bounded: it
 * counts very long words in slices (compress/tokens.ts: on one long word it is quadratic) and at
 * most BPE_BUDGET_CHARS of an exchange; the rest is estimated by script, in linear time.
 */
import type { ToolCall, Usage } from '../../deterministic/types';
import { estimateTextTokens } from '../../deterministic/context/estimate';
import { countText, PER_MESSAGE_OVERHEAD, PER_TOOL_CALL_OVERHEAD, REPLY_PRIMING, tokenizerFor, type TokenizerKind } from '../compress/tokens';
import type { ModelRequest } from './client';

/** The tokenizer for an estimate: the model's own family when known, else cl100k (closer than characters for most open models). */
function kindFor(model: string): TokenizerKind {
  const kind = tokenizerFor(model);
  return kind === 'estimate' ? 'cl100k_base' : kind;
}

/** Characters of one exchange the tokenizer counts (a few milliseconds of prose, under a second of the worst text). */
const BPE_BUDGET_CHARS = 64 * 1024;

/** Estimated usage of one exchange: the request's messages and tool schemas in, the reply out. */
export function estimateUsage(req: Pick<ModelRequest, 'model' | 'messages' | 'tools'>, content: string | null, calls: readonly ToolCall[]): Usage {
  const count = boundedCounter(kindFor(req.model));
  // The reply first: it is what the estimate is for when the prompt is counted by the provider's side too.
  let completion = count(content ?? '');
  for (const c of calls) completion += count(c.name) + count(c.arguments);
  let prompt = REPLY_PRIMING;
  for (const m of req.messages) {
    prompt += PER_MESSAGE_OVERHEAD + count(m.content ?? '');
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) prompt += PER_TOOL_CALL_OVERHEAD + count(c.name) + count(c.arguments);
  }
  for (const t of req.tools) prompt += count(`${t.name} ${t.description} ${JSON.stringify(t.parameters)}`);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** Counts texts with the tokenizer (which slices very long words itself) until the budget is spent; then by script. */
function boundedCounter(kind: TokenizerKind): (text: string) => number {
  let left = BPE_BUDGET_CHARS;
  return (text) => {
    if (text === '') return 0;
    const take = Math.min(left, text.length);
    const n = countText(text.slice(0, take), kind);
    left -= take;
    return take < text.length ? n + estimateTextTokens(text.slice(take)) : n;
  };
}

/** The usage a provider reported (plain or in a stream's last chunk) and, from the reply around it, the prompt tokens its cache served. */
export function providerUsage(u: { prompt_tokens?: number | null; completion_tokens?: number | null; total_tokens?: number | null }, reply: object = {}): Usage {
  return { prompt_tokens: u.prompt_tokens ?? 0, completion_tokens: u.completion_tokens ?? 0, total_tokens: u.total_tokens ?? 0, ...cachedOf(u, reply) };
}

/**
 * Prompt tokens the provider served from its cache (priced lower: `cachedInput`), under the name
 * each reports them: OpenAI's (and newer llama-server's) prompt_tokens_details.cached_tokens,
 * DeepSeek's prompt_cache_hit_tokens (beside its miss count), and llama-server's own fields on the
 * reply: timings.cache_n (prompt tokens its KV cache held) or tokens_cached.
 */
export function cachedOf(u: object, reply: object = {}): { cached_tokens?: number } {
  const x = u as { prompt_tokens_details?: { cached_tokens?: unknown } | null; prompt_cache_hit_tokens?: unknown };
  const r = reply as { timings?: { cache_n?: unknown } | null; tokens_cached?: unknown };
  for (const n of [x.prompt_tokens_details?.cached_tokens, x.prompt_cache_hit_tokens, r.timings?.cache_n, r.tokens_cached]) {
    if (typeof n === 'number' && Number.isFinite(n) && n > 0) return { cached_tokens: Math.floor(n) };
  }
  return {};
}
