/**
 * The ledger for a person (`harness cost`: totals, then by kind of call, by model, by turn) and
 * as JSON (`--json`, the eval report, the trace): money in USD, never a price where there is none.
 */
import { usd, usdText } from '../../deterministic/pricing';
import type { Ledger, TurnLedger } from './types';
import type { CallKind, Tally } from '../../deterministic/ledger';

const HEADING: Record<CallKind, string> = {
  model: 'model calls',
  compression: 'compression',
  correction: 'corrections',
  retry_waste: 'retry waste',
};

const n = (x: number) => String(Math.round(x)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** Money of a tally: `$0.0123`, or a dash when unpriced. */
export function moneyText(t: Pick<Tally, 'nanoUsd'>): string {
  return t.nanoUsd === undefined ? 'no price' : usdText(t.nanoUsd);
}

/** `12,345 tokens (10,000 prompt, 2,345 completion) · $0.0123`. */
export function tallyText(t: Tally, unit = 'call'): string {
  const cached = t.cached_tokens ? `, ${n(t.cached_tokens)} cached` : '';
  return `${n(t.calls)} ${unit}${t.calls === 1 ? '' : 's'} · ${n(t.total_tokens)} tokens (${n(t.prompt_tokens)} prompt${cached}, ${n(t.completion_tokens)} completion) · ${moneyText(t)}`;
}

/** How a turn was priced, in words. */
function pricingText(t: TurnLedger): string {
  const p = t.pricing;
  if (!p) return 'no price';
  if (p.free) return `${p.model}: free (${p.source})`;
  if (!p.price) return `${p.model}: no price (tokens only)`;
  const cached = p.price.cachedInput !== undefined ? ` / $${p.price.cachedInput} cached` : '';
  return `${p.model}: $${p.price.input} in${cached} / $${p.price.output} out per million tokens (${p.source})`;
}

/** The ledger as lines for a person. */
export function ledgerLines(l: Ledger): string[] {
  const turns = `${l.turns.length} turn${l.turns.length === 1 ? '' : 's'}`;
  const lines = [`${l.kind} ${l.id} · ${turns} · ${moneyText(l.total)} · ${n(l.total.total_tokens)} tokens`];
  const prices = [...new Set(l.turns.map(pricingText))];
  for (const p of prices) lines.push(`  priced: ${p}`);
  if (l.priced === 'some') lines.push('  (some turns have no price: the total counts tokens only)');
  lines.push('by kind:');
  for (const k of Object.keys(HEADING) as CallKind[]) {
    const t = l.byKind[k];
    if (t.calls || t.total_tokens) lines.push(`  ${HEADING[k].padEnd(12)} ${tallyText(t, k === 'retry_waste' ? 'attempt' : 'call')}`);
  }
  lines.push('by model:');
  for (const [model, t] of Object.entries(l.byModel)) lines.push(`  ${model.padEnd(12)} ${tallyText(t)}`);
  if (l.kind !== 'turn') {
    lines.push('by turn:');
    for (const t of l.turns) lines.push(`  ${t.turnId}  ${t.terminated_by ?? 'running'} · ${tallyText(t.total)}`);
  }
  for (const note of l.notes) lines.push(`note: ${note}`);
  return lines;
}

/** A tally as JSON: tokens, and `usd` when priced. */
export function tallyJson(t: Tally) {
  const { nanoUsd, ...rest } = t;
  return { ...rest, usd: nanoUsd === undefined ? null : usd(nanoUsd) };
}

/** One turn's ledger as JSON. */
function turnLedgerJson(t: TurnLedger) {
  return {
    turn_id: t.turnId,
    turn: t.turn,
    terminated_by: t.terminated_by ?? null,
    pricing: t.pricing ?? null,
    total: tallyJson(t.total),
    by_kind: Object.fromEntries(Object.entries(t.byKind).map(([k, v]) => [k, tallyJson(v)])),
    // Each call when read from the turn's events (`harness cost --calls`); a closed turn's recorded tally has none.
    calls: (t.entries ?? []).map(({ nanoUsd, wastedNanoUsd, ...e }) => ({
      ...e,
      usd: nanoUsd === undefined ? null : usd(nanoUsd),
      ...(e.wasted ? { wasted_usd: wastedNanoUsd === undefined ? null : usd(wastedNanoUsd) } : {}),
    })),
  };
}

/** The ledger as JSON (`harness cost --json`). */
export function ledgerJson(l: Ledger) {
  return {
    kind: l.kind,
    id: l.id,
    priced: l.priced,
    total: tallyJson(l.total),
    by_kind: Object.fromEntries(Object.entries(l.byKind).map(([k, v]) => [k, tallyJson(v)])),
    by_model: Object.fromEntries(Object.entries(l.byModel).map(([k, v]) => [k, tallyJson(v)])),
    turns: l.turns.map(turnLedgerJson),
    notes: l.notes,
  };
}
