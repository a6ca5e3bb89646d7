import type { ChatMessage } from '../types';

/**
 * A cheap token estimate by script, for deciding inside the workflow whether compression is
 * needed (the compressContext activity counts with the real tokenizer) and as the fallback
 * count for models without a known tokenizer. PURE and deterministic.
 *
 * BPE tokenizers spend about 4 characters of English or code per token, but about one token
 * per CJK character, and 2–3 characters of other non-Latin scripts. Dividing everything by 4
 * made a Chinese conversation look four times smaller than it is, so compression started far
 * too late and the provider rejected the request. Over-estimating only compresses earlier.
 */

/** Han, kana, hangul, CJK punctuation and fullwidth forms: about one token each. */
function isDense(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x11ff) || // Hangul Jamo
    (code >= 0x2e80 && code <= 0x9fff) || // CJK radicals, punctuation, kana, Han (incl. ext. A)
    (code >= 0xa960 && code <= 0xa97f) ||
    (code >= 0xac00 && code <= 0xd7ff) || // Hangul syllables
    (code >= 0xf900 && code <= 0xfaff) || // CJK compatibility ideographs
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xffef) || // fullwidth forms
    (code >= 0x20000 && code <= 0x3ffff) // Han extensions B and later
  );
}

/** Estimated tokens of a text: ASCII at 4 characters a token, CJK at 1, other scripts at 2. */
export function estimateTextTokens(text: string): number {
  let ascii = 0;
  let dense = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      ascii++;
      continue;
    }
    const full = text.codePointAt(i)!;
    if (full > 0xffff) i++; // the low surrogate belongs to this character
    if (isDense(full)) dense++;
    else other++;
  }
  return Math.ceil(ascii / 4 + dense + other / 2);
}

/**
 * Estimated tokens of one message: its text, and a tool call's name and arguments, by script,
 * plus a few for the framing. Workflow and activities count the same way.
 */
export function messageTokens(m: ChatMessage, count: (text: string) => number = estimateTextTokens): number {
  let n = count(m.content ?? '') + 3;
  if (m.role === 'assistant') for (const c of m.tool_calls ?? []) n += count(c.name) + count(c.arguments) + 3;
  return n;
}
