/**
 * The ledger from a turn's timeline (its runs read from history; lib/trace/timeline.ts): each
 * model call is one scheduled activity, counted once with the usage of the reply that closed it
 * (a retried attempt replaces the one before in history, and runs a reset replaced are left out
 * when the runs are read, so nothing counts twice); attempts that failed are retry_waste, with
 * the tokens the call recorded they used; compression summaries and text-protocol corrections
 * under their own headings. Pure: the trace, `harness cost`, `status`, the eval report and the
 * OTLP export all price through it.
 */
import type { ModelReply } from '../../common/activity-types';
import type { CompressContextResult } from '../../common/context/types';
import { costOf, type Pricing } from '../../common/pricing';
import type { ModelSpec } from '../../common/session';
import type { Usage } from '../../common/types';
import type { ActivityItem, Timeline } from '../trace/timeline';
import type { CallKind, Ledger, LedgerEntry, Tally, TurnLedger } from './types';

const KINDS: CallKind[] = ['model', 'compression', 'correction', 'retry_waste'];

/** An empty tally (money 0: sums stay priced until an unpriced part joins). */
export function emptyTally(): Tally {
  return { calls: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, total_tokens: 0, nanoUsd: 0 };
}

/** a + b; money unknown once either is. */
export function addTally(a: Tally, b: Tally): Tally {
  return {
    calls: a.calls + b.calls,
    prompt_tokens: a.prompt_tokens + b.prompt_tokens,
    completion_tokens: a.completion_tokens + b.completion_tokens,
    cached_tokens: a.cached_tokens + b.cached_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    ...(a.nanoUsd !== undefined && b.nanoUsd !== undefined ? { nanoUsd: a.nanoUsd + b.nanoUsd } : {}),
  };
}

function tallyOf(calls: number, usage: Usage | undefined, nanoUsd: number | undefined): Tally {
  return {
    calls,
    prompt_tokens: usage?.prompt_tokens ?? 0,
    completion_tokens: usage?.completion_tokens ?? 0,
    cached_tokens: usage?.cached_tokens ?? 0,
    total_tokens: usage?.total_tokens ?? 0,
    ...(nanoUsd !== undefined ? { nanoUsd } : {}),
  };
}

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});
const isUsage = (u: unknown): u is Usage => typeof obj(u).total_tokens === 'number';

function minus(a: Usage, b: Usage): Usage {
  return {
    prompt_tokens: Math.max(0, a.prompt_tokens - b.prompt_tokens),
    completion_tokens: Math.max(0, a.completion_tokens - b.completion_tokens),
    total_tokens: Math.max(0, a.total_tokens - b.total_tokens),
    ...(a.cached_tokens ? { cached_tokens: Math.max(0, a.cached_tokens - (b.cached_tokens ?? 0)) } : {}),
  };
}

function sum(us: Usage[]): Usage | undefined {
  if (!us.length) return undefined;
  return us.reduce((s, u) => ({
    prompt_tokens: s.prompt_tokens + u.prompt_tokens,
    completion_tokens: s.completion_tokens + u.completion_tokens,
    total_tokens: s.total_tokens + u.total_tokens,
    ...((s.cached_tokens ?? 0) + (u.cached_tokens ?? 0) ? { cached_tokens: (s.cached_tokens ?? 0) + (u.cached_tokens ?? 0) } : {}),
  }));
}

/** The entries of one model-call or compression activity. */
function entriesOf(a: ActivityItem, pricing: Pricing | undefined): LedgerEntry[] {
  const input = obj(a.input);
  const step = typeof input.step === 'number' ? input.step : a.step;
  const callIndex = typeof input.callIndex === 'number' ? input.callIndex : undefined;
  const model = String(obj(input.model).model ?? pricing?.model ?? 'model');
  const done = a.result !== undefined && a.failure === undefined;
  // Attempts it took: the one that closed it (or the one running) and the failed ones before.
  const attempts = Math.max(1, (done ? (obj(a.result).attempt as number | undefined) : undefined) ?? a.attempt ?? 1);
  const base = { step, ...(callIndex !== undefined ? { callIndex } : {}), model };
  const priced = (u: Usage | undefined) => (u ? costOf(u, pricing) : 0);
  const running = !done && a.failure === undefined;
  // A call still running has wasted only the attempts before it; one that failed, all of them.
  const failedAttempts = done || running ? attempts - 1 : attempts;
  if (a.type === 'compressContext') {
    const usage = done ? (obj(a.result) as unknown as CompressContextResult).summary_usage : undefined;
    if (!usage && !failedAttempts) return [];
    return [clean({ kind: 'compression', ...base, ...(usage ? { usage, nanoUsd: priced(usage) } : {}), attempts: failedAttempts + (done ? 1 : 0) })];
  }
  const reply = done ? (a.result as ModelReply) : undefined;
  const wasted = reply?.wasted ?? (obj(a.failureDetails).wasted as Usage | undefined);
  const waste = isUsage(wasted) ? { wasted, wastedNanoUsd: priced(wasted) } : {};
  const kind: LedgerEntry['kind'] = input.purpose === 'compress' ? 'compression' : 'model';
  // Corrections (text protocol) that say what they used are counted apart from the reply that stood.
  const fixes = (reply?.protocol?.corrections ?? []).map((c) => (c as { usage?: unknown }).usage).filter(isUsage);
  const fixed = sum(fixes);
  const usage = reply && (fixed ? minus(reply.usage, fixed) : reply.usage);
  const entries: LedgerEntry[] = [{ kind, ...base, ...(usage ? { usage, nanoUsd: priced(usage) } : {}), attempts: failedAttempts + (done ? 1 : 0), ...waste }];
  if (fixed) entries.push({ kind: 'correction', ...base, usage: fixed, nanoUsd: priced(fixed), attempts: fixes.length });
  return entries.map(clean);
}

/** Drops an undefined price (the model has none) so the entry reads as unpriced. */
function clean(e: LedgerEntry): LedgerEntry {
  const out = { ...e };
  if (out.nanoUsd === undefined) delete out.nanoUsd;
  if (out.wastedNanoUsd === undefined) delete out.wastedNanoUsd;
  return out;
}

/** What an entry adds under each heading. */
function tallies(e: LedgerEntry): [CallKind, Tally][] {
  const out: [CallKind, Tally][] = [];
  const succeeded = e.usage ? 1 : 0;
  if (e.usage) out.push([e.kind, tallyOf(e.kind === 'correction' ? e.attempts : 1, e.usage, e.nanoUsd)]);
  const failed = e.kind === 'correction' ? 0 : e.attempts - succeeded;
  if (failed > 0 || e.wasted) out.push(['retry_waste', tallyOf(failed, e.wasted, e.wasted ? e.wastedNanoUsd : 0)]);
  return out;
}

/** The ledger of one turn from its timeline; `fallback` prices turns whose session recorded no pricing. */
export function turnLedger(turnId: string, t: Timeline, fallback?: (model: ModelSpec) => Pricing): TurnLedger {
  const config = t.input?.config;
  const pricing = config?.pricing ?? (config?.model && fallback ? fallback(config.model) : undefined);
  const entries = t.activities.filter((a) => a.type === 'callModel' || a.type === 'compressContext').flatMap((a) => entriesOf(a, pricing));
  const byKind = Object.fromEntries(KINDS.map((k) => [k, emptyTally()])) as Record<CallKind, Tally>;
  for (const e of entries) for (const [k, tally] of tallies(e)) byKind[k] = addTally(byKind[k], tally);
  const total = KINDS.reduce((s, k) => addTally(s, byKind[k]), emptyTally());
  return {
    turnId,
    turn: t.input?.turn ?? Number(/\/turn-(\d+)$/.exec(turnId)?.[1] ?? 0),
    ...(pricing ? { pricing } : {}),
    ...(t.closed?.result?.terminated_by ? { terminated_by: t.closed.result.terminated_by } : {}),
    entries,
    byKind,
    total,
  };
}

/** Turns' ledgers added up into the ledger of a turn, a session or an eval run. */
export function combine(kind: Ledger['kind'], id: string, turns: TurnLedger[], notes: string[] = []): Ledger {
  const byKind = Object.fromEntries(KINDS.map((k) => [k, emptyTally()])) as Record<CallKind, Tally>;
  const byModel: Record<string, Tally> = {};
  for (const t of turns) {
    for (const k of KINDS) byKind[k] = addTally(byKind[k], t.byKind[k]);
    for (const e of t.entries) for (const [, tally] of tallies(e)) byModel[e.model] = addTally(byModel[e.model] ?? emptyTally(), tally);
  }
  const total = KINDS.reduce((s, k) => addTally(s, byKind[k]), emptyTally());
  const pricedTurns = turns.filter((t) => t.total.nanoUsd !== undefined).length;
  return { kind, id, turns, byKind, byModel, total, priced: pricedTurns === turns.length ? 'all' : pricedTurns ? 'some' : 'none', notes };
}
