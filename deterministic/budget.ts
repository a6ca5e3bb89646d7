/**
 * Budgets: how much a turn and a session may spend, in tokens or money, and the check a turn
 * makes before each model call. Pure and deterministic (the turn workflow runs it): spend is
 * counted from the usage model calls record, priced with the session's pricing.
 */
import { costOf, NANO, usd, type Pricing } from './pricing';
import type { Usage } from './types';

/** A ceiling in tokens, in USD, or both (whichever is reached first). */
export interface BudgetLimit {
  tokens?: number;
  usd?: number;
}

/** `limits.budget`: per turn and per session. */
export interface Budget {
  turn?: BudgetLimit;
  session?: BudgetLimit;
}

/** What was spent: tokens, and nano-dollars when the model is priced (absent: unknown price). */
export interface Spend {
  tokens: number;
  nanoUsd?: number;
}

/** Nothing spent. */
export const NO_SPEND: Spend = { tokens: 0, nanoUsd: 0 };

/** Which budget a wait is about, and in which unit. */
export type BudgetScope = 'turn' | 'session';
export type BudgetUnit = 'tokens' | 'usd';

/** Amounts people added to budgets with `approve --budget +N`, per scope and unit. */
export type BudgetRaises = Partial<Record<BudgetScope, BudgetLimit>>;

/** Why a model call may not go ahead: the budget it would pass, what is spent, and what the call may cost (in the budget's unit). */
export interface BudgetBreach {
  scope: BudgetScope;
  unit: BudgetUnit;
  /** The ceiling with every raise so far. */
  limit: number;
  spent: number;
  estimate: number;
}

/** A reply's output is counted at this many tokens when the session sets no limit on it (a guess, stated in docs/costs.md). */
export const OUTPUT_ESTIMATE_TOKENS = 4096;

/** a + b; money stays unknown once either side is. */
export function addSpend(a: Spend, b: Spend): Spend {
  return { tokens: a.tokens + b.tokens, ...(a.nanoUsd !== undefined && b.nanoUsd !== undefined ? { nanoUsd: a.nanoUsd + b.nanoUsd } : {}) };
}

/** a − b, never below zero (a retried turn's spend taken back out of the session's). */
export function subtractSpend(a: Spend, b: Spend): Spend {
  return {
    tokens: Math.max(0, a.tokens - b.tokens),
    ...(a.nanoUsd !== undefined && b.nanoUsd !== undefined ? { nanoUsd: Math.max(0, a.nanoUsd - b.nanoUsd) } : {}),
  };
}

/** The spend of one usage under the session's pricing. */
export function spendOf(usage: Usage | undefined, pricing: Pricing | undefined): Spend {
  if (!usage) return NO_SPEND;
  const nanoUsd = costOf(usage, pricing);
  return { tokens: usage.total_tokens, ...(nanoUsd !== undefined ? { nanoUsd } : {}) };
}

/**
 * A conservative estimate of the next model call: the context as estimated in the workflow or as
 * the last call measured it (which counts the tool schemas), whichever is more, plus a whole reply
 * of `outputTokens`, all priced at the full (uncached) input and output prices.
 */
export function callEstimate(contextTokens: number, lastPromptTokens: number, outputTokens: number, pricing: Pricing | undefined): Spend {
  const input = Math.ceil(Math.max(contextTokens, lastPromptTokens));
  const usage: Usage = { prompt_tokens: input, completion_tokens: outputTokens, total_tokens: input + outputTokens };
  return spendOf(usage, pricing);
}

/** The first budget (turn before session, tokens before money) the call would pass, or undefined. */
export function budgetBreach(budget: Budget | undefined, raises: BudgetRaises, spent: Record<BudgetScope, Spend>, estimate: Spend): BudgetBreach | undefined {
  for (const scope of ['turn', 'session'] as const) {
    const limit = budget?.[scope];
    if (!limit) continue;
    if (limit.tokens !== undefined) {
      const ceiling = limit.tokens + (raises[scope]?.tokens ?? 0);
      if (spent[scope].tokens + estimate.tokens > ceiling) return { scope, unit: 'tokens', limit: ceiling, spent: spent[scope].tokens, estimate: estimate.tokens };
    }
    if (limit.usd !== undefined) {
      const ceiling = Math.round((limit.usd + (raises[scope]?.usd ?? 0)) * NANO);
      const have = spent[scope].nanoUsd ?? 0;
      const next = estimate.nanoUsd ?? 0;
      if (have + next > ceiling) return { scope, unit: 'usd', limit: usd(ceiling), spent: usd(have), estimate: usd(next) };
    }
  }
  return undefined;
}

/** Adds a raise to the raises so far. */
export function addRaise(raises: BudgetRaises, scope: BudgetScope, unit: BudgetUnit, by: number): BudgetRaises {
  const now = raises[scope] ?? {};
  return { ...raises, [scope]: { ...now, [unit]: (now[unit] ?? 0) + by } };
}

/** A budget amount as a person reads it: `12,000 tokens` or `$0.50`. */
export function budgetAmount(unit: BudgetUnit, n: number): string {
  return unit === 'tokens' ? `${String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')} tokens` : `$${n < 1 ? n.toFixed(4).replace(/0{1,2}$/, '') : n.toFixed(2)}`;
}

/** One line saying what a budget wait is about. */
export function budgetLine(b: BudgetBreach): string {
  return `the ${b.scope}'s budget of ${budgetAmount(b.unit, b.limit)} is reached: ${budgetAmount(b.unit, b.spent)} spent, the next model call may take up to ${budgetAmount(b.unit, b.estimate)}`;
}
