/**
 * Costs on a turn's spans, from the turn's ledger (history/ledger, the same function `harness cost`
 * uses): the turn's total and waste on the turn span, each model call's and compression's own cost
 * (prompt and completion apart, as OpenInference's `llm.cost.*` want them) and what its failed
 * attempts wasted. Spans of an unpriced model get tokens only, never a price.
 */
import { nanoUsdOf, usd, type Pricing } from '../../deterministic/pricing';
import type { Usage } from '../../deterministic/types';
import { tallyJson } from '../ledger/render';
import type { TurnLedger } from '../ledger/types';
import type { LedgerEntry } from '../../deterministic/ledger';
import type { BuiltSpan } from './types';

/** Adds `cost` to the turn span's output and to each model call's and compression's. */
export function addCosts(spans: BuiltSpan[], ledger: TurnLedger): void {
  const byCall = new Map<string, LedgerEntry[]>();
  for (const e of ledger.entries ?? []) {
    const key = `${e.step}/${e.callIndex ?? ''}/${e.kind === 'correction' ? 'model' : e.kind}`;
    byCall.set(key, [...(byCall.get(key) ?? []), e]);
  }
  for (const { span } of spans) {
    if (!span.output) continue;
    if (span.type === 'turn') {
      span.output.cost = { ...tallyJson(ledger.total), retry_waste: tallyJson(ledger.byKind.retry_waste) };
      continue;
    }
    if (span.type !== 'llm_call' && span.type !== 'compress') continue;
    const kind = span.type === 'llm_call' ? 'model' : 'compression';
    const entries = byCall.get(`${span.input.step}/${span.input.call_index ?? ''}/${kind}`) ?? [];
    const cost = callCost(entries, ledger.pricing);
    if (cost) span.output.cost = cost;
  }
}

/** One call's cost: the reply's (split into prompt and completion), corrections', and its failed attempts'. */
function callCost(entries: LedgerEntry[], pricing: Pricing | undefined): Record<string, unknown> | undefined {
  const main = entries.find((e) => e.kind !== 'correction');
  if (!main) return undefined;
  const fix = entries.find((e) => e.kind === 'correction');
  const split = main.usage && pricing?.price ? splitUsd(main.usage, pricing.price) : main.usage && pricing?.free ? { prompt_usd: 0, completion_usd: 0 } : {};
  return {
    usd: main.nanoUsd === undefined ? null : usd(main.nanoUsd + (fix?.nanoUsd ?? 0)),
    ...split,
    ...(fix ? { corrections_tokens: fix.usage?.total_tokens ?? 0, corrections_usd: fix.nanoUsd === undefined ? null : usd(fix.nanoUsd) } : {}),
    ...(main.attempts > (main.usage ? 1 : 0) ? { failed_attempts: main.attempts - (main.usage ? 1 : 0) } : {}),
    ...(main.wasted ? { wasted_tokens: main.wasted.total_tokens, wasted_usd: main.wastedNanoUsd === undefined ? null : usd(main.wastedNanoUsd) } : {}),
  };
}

/** The prompt's and the completion's shares (they add up to the call's cost exactly). */
function splitUsd(u: Usage, price: NonNullable<Pricing['price']>): { prompt_usd: number; completion_usd: number } {
  const prompt = nanoUsdOf({ ...u, completion_tokens: 0 }, price);
  const completion = nanoUsdOf({ prompt_tokens: 0, completion_tokens: u.completion_tokens, total_tokens: u.completion_tokens }, price);
  return { prompt_usd: usd(prompt), completion_usd: usd(completion) };
}
