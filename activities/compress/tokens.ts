/**
 * Token counting for chat messages with a real BPE tokenizer (`gpt-tokenizer`: pure
 * JavaScript, encodings bundled in the package, nothing downloaded at run time).
 *
 * Model families:
 * - o200k_base: gpt-4o*, gpt-4.1*, gpt-4.5*, gpt-5*, o1*, o3*, o4*, chatgpt-4o*, gpt-oss*  (exact)
 * - cl100k_base: gpt-4 (non-o), gpt-3.5*, text-embedding-3*, text-embedding-ada-002                        (exact)
 * - estimate via cl100k_base: deepseek*, qwen*, glm*, moonshot/kimi*, llama*, mistral*, yi* —
 *   their own tokenizers differ (typically within ±15% on English and code); cl100k is a
 *   reasonable stand-in that keeps the threshold decision realistic.
 * - anything else (including "scripted"): the fallback estimate by script (deterministic/context/estimate.ts):
 *   4 ASCII characters a token, one token per CJK character, 2 characters of other scripts.
 *
 * Per-message overhead follows OpenAI's chat format accounting: 3 tokens per message
 * (role and separators), plus 3 to prime the reply; tool calls add their name and arguments
 * and a few tokens of framing.
 */
import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base';
import * as o200k from 'gpt-tokenizer/encoding/o200k_base';
import type { ChatMessage } from '../../deterministic/types';
import { estimateTextTokens } from '../../deterministic/context/estimate';

/** Which tokenizer a model maps to. */
export type TokenizerKind = 'o200k_base' | 'cl100k_base' | 'estimate';

/** Tokens added per message by the chat format. */
export const PER_MESSAGE_OVERHEAD = 3;
/** Tokens that prime the assistant's reply. */
export const REPLY_PRIMING = 3;
/** Framing tokens per tool call (type, id, braces). */
export const PER_TOOL_CALL_OVERHEAD = 8;

const O200K = /^(?:gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|chatgpt-4o|gpt-oss|codex)/i;
const CL100K = /^(?:gpt-4|gpt-3\.5|text-embedding-3|text-embedding-ada-002)/i;
const CL100K_ESTIMATE = /^(?:deepseek|qwen|glm|chatglm|moonshot|kimi|llama|meta-llama|mistral|mixtral|yi-|codestral)/i;

/** The tokenizer used for a model name ("openai/gpt-4o" and "azure/gpt-4o" work too). */
export function tokenizerFor(model: string): TokenizerKind {
  const name = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  if (O200K.test(name)) return 'o200k_base';
  if (CL100K.test(name) || CL100K_ESTIMATE.test(name)) return 'cl100k_base';
  return 'estimate';
}

const NO_SPECIAL = { disallowedSpecial: new Set<string>() };

/** Tokens of a text with the given tokenizer, or the estimate by script. */
export function countText(text: string, kind: TokenizerKind): number {
  if (text === '') return 0;
  switch (kind) {
    case 'o200k_base':
      return bpeCount(text, (t) => o200k.countTokens(t, NO_SPECIAL));
    case 'cl100k_base':
      return bpeCount(text, (t) => cl100k.countTokens(t, NO_SPECIAL));
    default:
      return estimateTextTokens(text);
  }
}

/** Words at least this long are counted in slices of WORD_SLICE (a tool result or a model may send one of any length). */
const LONG_WORD = /\S{1024,}/g;
export const WORD_SLICE = 512;

/**
 * The BPE count with every very long word counted in slices: the tokenizer's work grows with the
 * square of a word's length (one 256 KiB word took minutes), and text of ordinary words is
 * counted exactly as before. A slice boundary inside a word may shift the count by a token.
 */
function bpeCount(text: string, count: (t: string) => number): number {
  let n = 0;
  let from = 0;
  for (const m of text.matchAll(LONG_WORD)) {
    n += count(text.slice(from, m.index));
    for (let i = 0; i < m[0].length; i += WORD_SLICE) n += count(m[0].slice(i, i + WORD_SLICE));
    from = m.index + m[0].length;
  }
  return from === 0 ? count(text) : n + count(text.slice(from));
}

/** Tokens of one message including its per-message overhead (no reply priming). */
function countMessage(m: ChatMessage, kind: TokenizerKind): number {
  let n = PER_MESSAGE_OVERHEAD + countText(m.content ?? '', kind);
  if (m.role === 'assistant') {
    for (const c of m.tool_calls ?? []) n += PER_TOOL_CALL_OVERHEAD + countText(c.name, kind) + countText(c.arguments, kind);
  }
  return n;
}

/** Tokens of a whole request's messages (with reply priming). */
export function countTokens(messages: readonly ChatMessage[], model: string): number {
  const kind = tokenizerFor(model);
  return REPLY_PRIMING + messages.reduce((sum, m) => sum + countMessage(m, kind), 0);
}

/** Per-message counts (for planContext) and the total. */
export function countEach(messages: readonly ChatMessage[], model: string): { counts: number[]; total: number } {
  const kind = tokenizerFor(model);
  const counts = messages.map((m) => countMessage(m, kind));
  return { counts, total: REPLY_PRIMING + counts.reduce((a, b) => a + b, 0) };
}
