/**
 * The ledger from a turn's timeline (its runs read from history): each model call is one scheduled
 * activity, counted once with the usage of the reply that closed it (a retried attempt replaces
 * the one before in history, and runs a reset replaced are left out when the runs are read, so
 * nothing counts twice); attempts that failed are retry_waste, with the tokens the call recorded
 * they used; compression summaries and text-protocol corrections under their own headings. The
 * counting itself is deterministic/ledger.ts, which the turn also uses to record a closed turn's tally.
 */
import type { ModelReply } from '../../deterministic/activity-types';
import type { CompressContextResult } from '../../deterministic/context/types';
import { countEntries, emptyLedgerTally, ledgerEntries, mergeTallies, totalOf, type CallOutcome, type LedgerTally } from '../../deterministic/ledger';
import type { Pricing } from '../../deterministic/pricing';
import type { TurnResult } from '../../deterministic/session';
import type { ModelSpec } from '../../deterministic/session-config';
import type { Usage } from '../../deterministic/types';
import { turnNumberOf } from '../../deterministic/turn-id';
import type { ActivityItem, Timeline } from '../trace/timeline';
import type { Ledger, TurnLedger } from './types';

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
const isUsage = (u: unknown): u is Usage => typeof obj(u).total_tokens === 'number';

/** How a model-call or compression activity went, as history recorded it. */
function outcomeOf(a: ActivityItem, pricing: Pricing | undefined): CallOutcome | undefined {
  const input = obj(a.input);
  const step = typeof input.step === 'number' ? input.step : a.step;
  const base = { step, ...(typeof input.callIndex === 'number' ? { callIndex: input.callIndex } : {}), model: String(obj(input.model).model ?? pricing?.model ?? 'model') };
  const done = a.result !== undefined && a.failure === undefined;
  // Attempts it took: the one that closed it (or the one running) and the failed ones before;
  // a call still running has wasted only the attempts before it.
  const seen = Math.max(1, (done ? (obj(a.result).attempt as number | undefined) : undefined) ?? a.attempt ?? 1);
  const attempts = !done && a.failure === undefined ? seen - 1 : seen;
  if (a.type === 'compressContext') {
    const usage = done ? (a.result as CompressContextResult).summary_usage : undefined;
    // Without a summary call only the failed attempts count (as waste).
    const failed = usage ? attempts : done ? attempts - 1 : attempts;
    if (!usage && failed <= 0) return undefined;
    return { kind: 'compression', ...base, attempts: failed, ...(usage ? { usage } : {}) };
  }
  const reply = done ? (a.result as ModelReply) : undefined;
  const wasted = reply?.wasted ?? obj(a.failureDetails).wasted;
  const corrections = (reply?.protocol?.corrections ?? []).map((c) => (c as { usage?: unknown }).usage).filter(isUsage);
  if (!reply && !attempts) return undefined;
  return {
    kind: input.purpose === 'compress' ? 'compression' : 'model',
    ...base,
    attempts,
    ...(reply ? { usage: reply.usage } : {}),
    ...(isUsage(wasted) ? { wasted } : {}),
    ...(corrections.length ? { corrections } : {}),
  };
}

function ledgerOf(turnId: string, turn: number, tally: LedgerTally, extra: Partial<TurnLedger>): TurnLedger {
  return { turnId, turn, ...extra, byKind: tally.byKind, byModel: tally.byModel, total: totalOf(tally) };
}

/** The ledger of one turn from its timeline; `fallback` prices turns whose session recorded no pricing. */
export function turnLedger(turnId: string, t: Timeline, fallback?: (model: ModelSpec) => Pricing): TurnLedger {
  const config = t.input?.config;
  const pricing = config?.pricing ?? (config?.model && fallback ? fallback(config.model) : undefined);
  const entries = t.activities.flatMap((a) => {
    const o = a.type === 'callModel' || a.type === 'compressContext' ? outcomeOf(a, pricing) : undefined;
    return o ? ledgerEntries(o, pricing) : [];
  });
  return ledgerOf(turnId, t.input?.turn ?? turnNumberOf(turnId), countEntries(emptyLedgerTally(), entries), {
    ...(pricing ? { pricing } : {}),
    ...(t.closed?.result?.terminated_by ? { terminated_by: t.closed.result.terminated_by } : {}),
    entries,
  });
}

/** The ledger of a closed turn from the tally it recorded in its result (counted by the same code). */
export function recordedLedger(turnId: string, r: TurnResult, pricing: Pricing | undefined): TurnLedger | undefined {
  if (!r.ledger?.exact) return undefined;
  return ledgerOf(turnId, r.turn ?? turnNumberOf(turnId), r.ledger, { ...(pricing ? { pricing } : {}), terminated_by: r.terminated_by });
}

/** Turns' ledgers added up into the ledger of a turn, a session or an eval run. */
export function combine(kind: Ledger['kind'], id: string, turns: TurnLedger[], notes: string[] = []): Ledger {
  const tally = turns.reduce<LedgerTally>((s, t) => mergeTallies(s, t), emptyLedgerTally());
  const pricedTurns = turns.filter((t) => t.total.nanoUsd !== undefined).length;
  return { kind, id, turns, ...tally, total: totalOf(tally), priced: pricedTurns === turns.length ? 'all' : pricedTurns ? 'some' : 'none', notes };
}
