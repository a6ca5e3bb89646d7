/** Budget amounts as people type them (no zod here: commands parse their flags with it when they load). */
import type { BudgetUnit } from '../deterministic/budget';
import { UsageError } from '../machine/errors';

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
