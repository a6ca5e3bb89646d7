/**
 * What tokens cost: a model's price (USD per million tokens) and the cost of a usage under it.
 * Pure and deterministic (workflow code prices model calls against a budget with it). Money is
 * counted in whole nano-dollars (1e-9 USD): sums of integers are exact, so the workflow's own
 * tally, the ledger read from history and every report add up to the same figure.
 */
import type { Usage } from './types';

/** USD per million tokens: prompt tokens, prompt tokens served from the provider's cache, completion tokens. */
export interface Price {
  input: number;
  cachedInput?: number;
  output: number;
}

/**
 * How a session's model is priced, fixed when the session starts (so history alone prices it):
 * a price and where it came from, `free` (a local model nobody priced), or neither (unknown:
 * tokens only, never a made-up price).
 */
export interface Pricing {
  /** The model the price was looked up for. */
  model: string;
  price?: Price;
  free?: boolean;
  /** `config`, `default table <date>`, or `local model` (free). */
  source: string;
}

/** Nano-dollars in one USD. */
export const NANO = 1_000_000_000;

/** Nano-dollars of `tokens` at `perMillion` USD per million tokens (rounded per component). */
function nanos(tokens: number, perMillion: number): number {
  return Math.round(tokens * perMillion * 1000);
}

/** The cost of a usage in nano-dollars: cached prompt tokens at the cached price (the input price when none is given). */
export function nanoUsdOf(usage: Usage, price: Price): number {
  const cached = Math.min(usage.cached_tokens ?? 0, usage.prompt_tokens);
  return nanos(usage.prompt_tokens - cached, price.input) + nanos(cached, price.cachedInput ?? price.input) + nanos(usage.completion_tokens, price.output);
}

/** The cost of a usage under a pricing: nano-dollars, 0 for a free model, undefined when the price is unknown. */
export function costOf(usage: Usage, pricing: Pricing | undefined): number | undefined {
  if (pricing?.price) return nanoUsdOf(usage, pricing.price);
  return pricing?.free ? 0 : undefined;
}

/** Nano-dollars as USD (for display and JSON). */
export function usd(nano: number): number {
  return nano / NANO;
}

/** USD as a person reads it: `$0.0123`, more digits for tiny sums, never rounded to zero. */
export function usdText(nano: number): string {
  const v = usd(nano);
  if (v === 0) return '$0';
  const digits = v >= 1 ? 2 : Math.min(9, Math.max(4, 2 - Math.floor(Math.log10(v)) + 1));
  return `$${v.toFixed(digits).replace(/(\.\d*?[1-9])0+$/, '$1')}`;
}
