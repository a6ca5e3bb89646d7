/**
 * Budgets at the boundaries: `limits.budget` in harness.config.json (zod), the amounts people
 * type (`eval --budget 200000`, `--budget '$2.50'`, `approve --budget +5000`), and the check
 * that a budget in money has a price to count against.
 */
import { z } from 'zod';
import type { Budget, BudgetUnit } from '../common/budget';
import type { Pricing } from '../common/pricing';
import { UsageError } from './errors';

const limitSchema = z
  .object({ tokens: z.number().int().positive(), usd: z.number().positive().max(1_000_000) })
  .partial()
  .strict()
  .refine((l) => l.tokens !== undefined || l.usd !== undefined, { message: 'give tokens, usd or both' });

/** `limits.budget`: `{ "turn": { "tokens": 50000 }, "session": { "usd": 2.5 } }`. */
export const budgetSchema = z.object({ turn: limitSchema, session: limitSchema }).partial().strict();

/** A budget amount a person typed: `5000` (tokens) or `$2.50` / `2.50usd` (money); `raise` allows and strips a leading `+`. */
export function parseBudgetAmount(text: string, opts: { raise?: boolean } = {}): { unit: BudgetUnit; amount: number } {
  let t = text.trim().toLowerCase();
  if (opts.raise) t = t.replace(/^\+/, '');
  const money = /^\$/.test(t) || /usd$/.test(t);
  const n = Number(t.replace(/^\$/, '').replace(/\s*usd$/, '').replace(/_/g, ''));
  const example = opts.raise ? 'raise by tokens (+5000) or money (+$0.50)' : 'give tokens (200000) or money ($2.50)';
  if (!/^[$\d.]/.test(t) || !Number.isFinite(n) || n <= 0) throw new UsageError(`"${text}" is not a budget amount`, example);
  if (money) return { unit: 'usd', amount: n };
  // Without a $ it is tokens, which are whole: a fraction was meant as money, and guessing could cost.
  if (!Number.isInteger(n)) throw new UsageError(`"${text}" is not a whole number of tokens`, `for money write it with a dollar sign: ${opts.raise ? '+' : ''}$${n}`);
  return { unit: 'tokens', amount: n };
}

/** A budget in money needs a price: one against an unknown price could never be enforced. */
export function checkBudgetPricing(budget: Budget | undefined, pricing: Pricing): void {
  for (const scope of ['turn', 'session'] as const) {
    if (budget?.[scope]?.usd === undefined || pricing.price || pricing.free) continue;
    throw new UsageError(
      `limits.budget.${scope}.usd: the model ${pricing.model} has no price, so a budget in money cannot be counted`,
      `add its price to "prices" in harness.config.json ({"${pricing.model}": {"input": …, "output": …}}, USD per million tokens), or budget in tokens`,
    );
  }
}
