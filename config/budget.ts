/**
 * Budgets at the boundaries: `limits.budget` in harness.config.json (zod), the amounts people
 * type (`eval --budget 200000`, `--budget '$2.50'`, `approve --budget +5000`), and the check
 * that a budget in money has a price to count against.
 */
import { z } from 'zod';
import type { Budget } from '../deterministic/budget';
import type { Pricing } from '../deterministic/pricing';
import { UsageError } from '../machine/errors';

// Amounts are parsed without zod (config/budget-amount.ts), so commands parse them cheaply.

const limitSchema = z
  .object({ tokens: z.number().int().positive(), usd: z.number().positive().max(1_000_000) })
  .partial()
  .strict()
  .refine((l) => l.tokens !== undefined || l.usd !== undefined, { message: 'give tokens, usd or both' });

/** `limits.budget`: `{ "turn": { "tokens": 50000 }, "session": { "usd": 2.5 } }`. */
export const budgetSchema = z.object({ turn: limitSchema, session: limitSchema }).partial().strict();

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
