/**
 * The price table: the shipped default (dated: prices change, and a stale figure is worse than
 * none), overridden per model by `prices` in harness.config.json, and how a session's model is
 * priced when it starts. A model the table does not know gets no price (tokens only); a local
 * model (scripted, or an endpoint on this machine or a private network) is free unless priced.
 */
import { z } from 'zod';
import type { ModelSpec } from '../deterministic/session-config';
import type { Price, Pricing } from '../deterministic/pricing';

/**
 * Published list prices of common OpenAI-compatible models, USD per million tokens (standard
 * tier, no batch discount), as taken on `asOf`. Not re-checked since: override in `prices`.
 */
export const DEFAULT_PRICES: { asOf: string; models: Record<string, Price> } = {
  asOf: '2025-10-01',
  models: {
    'gpt-5': { input: 1.25, cachedInput: 0.125, output: 10 },
    'gpt-5-mini': { input: 0.25, cachedInput: 0.025, output: 2 },
    'gpt-5-nano': { input: 0.05, cachedInput: 0.005, output: 0.4 },
    'gpt-4.1': { input: 2, cachedInput: 0.5, output: 8 },
    'gpt-4.1-mini': { input: 0.4, cachedInput: 0.1, output: 1.6 },
    'gpt-4.1-nano': { input: 0.1, cachedInput: 0.025, output: 0.4 },
    'gpt-4o': { input: 2.5, cachedInput: 1.25, output: 10 },
    'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
    'gpt-3.5-turbo': { input: 0.5, output: 1.5 },
    o3: { input: 2, cachedInput: 0.5, output: 8 },
    'o3-mini': { input: 1.1, cachedInput: 0.55, output: 4.4 },
    'o4-mini': { input: 1.1, cachedInput: 0.275, output: 4.4 },
    'deepseek-chat': { input: 0.28, cachedInput: 0.028, output: 0.42 },
    'deepseek-reasoner': { input: 0.28, cachedInput: 0.028, output: 0.42 },
  },
};

const perMillion = z.number().min(0).max(10_000);

/** One model's price in the config file: USD per million tokens. */
const priceSchema = z.object({ input: perMillion, cachedInput: perMillion.optional(), output: perMillion }).strict();

/** `prices` in the config file: model name → price (a dated snapshot like `gpt-4o-2024-08-06` uses its family's unless listed). */
export const pricesSchema = z.record(z.string().min(1).max(200), priceSchema);

/** The price of `model` in `table`: its own entry, else the longest entry it extends with `-…` (a dated snapshot). */
export function lookupPrice(model: string, table: Record<string, Price>): { key: string; price: Price } | undefined {
  if (table[model]) return { key: model, price: table[model]! };
  let best: string | undefined;
  for (const key of Object.keys(table)) if (model.startsWith(`${key}-`) && key.length > (best?.length ?? 0)) best = key;
  return best ? { key: best, price: table[best]! } : undefined;
}

/** How a session's model is priced: the config's price, else the default table's, else free when local, else unknown. */
export function resolvePricing(model: ModelSpec, configured: Record<string, Price> | undefined): Pricing {
  const own = configured && lookupPrice(model.model, configured);
  if (own) return { model: model.model, price: own.price, source: 'config' };
  if (isLocal(model)) return { model: model.model, free: true, source: 'local model' };
  const shipped = lookupPrice(model.model, DEFAULT_PRICES.models);
  if (shipped) return { model: model.model, price: shipped.price, source: `default table ${DEFAULT_PRICES.asOf}` };
  return { model: model.model, source: 'no price' };
}

/** A scripted model, or an endpoint on this machine or a private network: it costs nothing unless priced. */
export function isLocal(model: ModelSpec): boolean {
  if (model.provider === 'scripted') return true;
  if (!model.baseUrl) return false;
  let host: string;
  try {
    host = new URL(model.baseUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host === '::1' || host === '0.0.0.0') return true;
  const v4 = /^(\d+)\.(\d+)\.\d+\.\d+$/.exec(host);
  if (!v4) return /^f[cd][0-9a-f]{2}:/.test(host); // IPv6 unique-local
  const [a, b] = [Number(v4[1]), Number(v4[2])];
  return a === 127 || a === 10 || (a === 192 && b === 168) || (a === 172 && b >= 16 && b <= 31) || (a === 100 && b >= 64 && b <= 127);
}
