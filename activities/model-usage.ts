/**
 * Usage as a provider reports it, and an estimate for replies whose provider sent none (some llama.cpp builds, proxies, streaming
 * gateways): counted with a real BPE tokenizer, so budgets and reports keep a realistic number
 * instead of zero. The reply says the counts are estimated.
 */
import type { ToolCall, Usage } from '../common/types';
import { countMessage, countText, REPLY_PRIMING, tokenizerFor, type TokenizerKind } from './compress/tokens';
import type { ModelRequest } from './model-client';

/** The tokenizer for an estimate: the model's own family when known, else cl100k (closer than characters for most open models). */
function kindFor(model: string): TokenizerKind {
  const kind = tokenizerFor(model);
  return kind === 'estimate' ? 'cl100k_base' : kind;
}

/** Estimated usage of one exchange: the request's messages and tool schemas in, the reply out. */
export function estimateUsage(req: Pick<ModelRequest, 'model' | 'messages' | 'tools'>, content: string | null, calls: readonly ToolCall[]): Usage {
  const kind = kindFor(req.model);
  let prompt = REPLY_PRIMING;
  for (const m of req.messages) prompt += countMessage(m, kind);
  for (const t of req.tools) prompt += countText(`${t.name} ${t.description} ${JSON.stringify(t.parameters)}`, kind);
  let completion = countText(content ?? '', kind);
  for (const c of calls) completion += countText(c.name, kind) + countText(c.arguments, kind);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** The usage a provider reported (plain or in a stream's last chunk), cached prompt tokens included. */
export function providerUsage(u: { prompt_tokens?: number | null; completion_tokens?: number | null; total_tokens?: number | null }): Usage {
  return { prompt_tokens: u.prompt_tokens ?? 0, completion_tokens: u.completion_tokens ?? 0, total_tokens: u.total_tokens ?? 0, ...cachedOf(u) };
}

/**
 * Prompt tokens the provider served from its cache (priced lower: `cachedInput`), under the name
 * each reports them: OpenAI's prompt_tokens_details.cached_tokens, DeepSeek's prompt_cache_hit_tokens.
 */
function cachedOf(u: object): { cached_tokens?: number } {
  const x = u as { prompt_tokens_details?: { cached_tokens?: unknown } | null; prompt_cache_hit_tokens?: unknown };
  const n = x.prompt_tokens_details?.cached_tokens ?? x.prompt_cache_hit_tokens;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? { cached_tokens: n } : {};
}
