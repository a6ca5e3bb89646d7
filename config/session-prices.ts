/**
 * Prices for turns whose session recorded none (sessions from before prices): the current table,
 * `prices` of the config file when one can be read over the dated default.
 */
import type { Pricing } from '../deterministic/pricing';
import type { ModelSpec } from '../deterministic/session-config';
import { parseConfigFile } from './resolve';
import { resolvePricing } from './prices';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** Prices models with the config file's `prices` (HARNESS_CONFIG or ./harness.config.json) over the default table. */
export function currentPricing(env: NodeJS.ProcessEnv, cwd: string): (model: ModelSpec) => Pricing {
  const file = env.HARNESS_CONFIG ? path.resolve(cwd, env.HARNESS_CONFIG) : path.join(cwd, 'harness.config.json');
  let prices: Parameters<typeof resolvePricing>[1];
  try {
    // Only prices are read: a file whose other settings need trust still prices nothing it should not.
    if (existsSync(file)) prices = parseConfigFile(file).prices;
  } catch {
    // An unreadable config prices with the default table alone; the ledger still tells tokens.
  }
  return (model) => resolvePricing(model, prices);
}
