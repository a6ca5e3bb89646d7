/**
 * The ledger's counting, pure and deterministic: what one model call or compression adds under
 * each heading (its reply once, corrections apart, failed attempts as retry_waste), priced with
 * the session's pricing. The history reader (history/ledger) and the turn itself (which records the
 * tally of a closed turn in its result, so a long turn's cost is read from one event) both count
 * with it, from the same recorded usage, so their figures are the same.
 */
import { costOf, type Pricing } from './pricing';
import type { Usage } from './types';

/** Headings of the ledger: turn model calls, compression summaries, text-protocol corrections, wasted attempts. */
export type CallKind = 'model' | 'compression' | 'correction' | 'retry_waste';
const CALL_KINDS: readonly CallKind[] = ['model', 'compression', 'correction', 'retry_waste'];

/** A sum of calls: how many, tokens, and money (nano-dollars) when every part was priced. */
export interface Tally {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  total_tokens: number;
  nanoUsd?: number;
}

/** How one model call (or compression) went, as history or the turn saw it. */
export interface CallOutcome {
  kind: 'model' | 'compression';
  step: number;
  callIndex?: number;
  model: string;
  /** Attempts it took (the one that succeeded, if any, included). */
  attempts: number;
  /** The usage of the reply that counted; absent when no attempt succeeded (or, for a compression, no summary was made). */
  usage?: Usage;
  /** Tokens the failed attempts used, when the provider reported them. */
  wasted?: Usage;
  /** Text-protocol corrections' usage, when they say (part of `usage`). */
  corrections?: Usage[];
}

/** One line of the ledger: a call's reply (or corrections), its attempts and waste, priced. */
export interface LedgerEntry {
  kind: Exclude<CallKind, 'retry_waste'>;
  step: number;
  callIndex?: number;
  model: string;
  usage?: Usage;
  attempts: number;
  wasted?: Usage;
  nanoUsd?: number;
  wastedNanoUsd?: number;
}

/** The sums of a turn (or more): by heading, and by model. */
export interface LedgerTally {
  byKind: Record<CallKind, Tally>;
  byModel: Record<string, Tally>;
}

/** An empty tally (money 0: sums stay priced until an unpriced part joins). */
function emptyTally(): Tally {
  return { calls: 0, prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, total_tokens: 0, nanoUsd: 0 };
}

/** Nothing counted yet. */
export function emptyLedgerTally(): LedgerTally {
  return { byKind: { model: emptyTally(), compression: emptyTally(), correction: emptyTally(), retry_waste: emptyTally() }, byModel: {} };
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

/** The total of every heading. */
export function totalOf(t: LedgerTally): Tally {
  return CALL_KINDS.reduce((s, k) => addTally(s, t.byKind[k]), emptyTally());
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

function sum(us: readonly Usage[]): Usage {
  return us.reduce(
    (s, u) => ({
      prompt_tokens: s.prompt_tokens + u.prompt_tokens,
      completion_tokens: s.completion_tokens + u.completion_tokens,
      total_tokens: s.total_tokens + u.total_tokens,
      ...((s.cached_tokens ?? 0) + (u.cached_tokens ?? 0) ? { cached_tokens: (s.cached_tokens ?? 0) + (u.cached_tokens ?? 0) } : {}),
    }),
    { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } as Usage,
  );
}

function minus(a: Usage, b: Usage): Usage {
  return {
    prompt_tokens: Math.max(0, a.prompt_tokens - b.prompt_tokens),
    completion_tokens: Math.max(0, a.completion_tokens - b.completion_tokens),
    total_tokens: Math.max(0, a.total_tokens - b.total_tokens),
    ...(a.cached_tokens ? { cached_tokens: Math.max(0, a.cached_tokens - (b.cached_tokens ?? 0)) } : {}),
  };
}

/** The ledger lines of a call: its reply (less the corrections it needed), and the corrections apart. */
export function ledgerEntries(o: CallOutcome, pricing: Pricing | undefined): LedgerEntry[] {
  const priced = (u: Usage) => costOf(u, pricing);
  const base = { step: o.step, ...(o.callIndex !== undefined ? { callIndex: o.callIndex } : {}), model: o.model };
  const waste = o.wasted?.total_tokens ? { wasted: o.wasted, ...opt('wastedNanoUsd', priced(o.wasted)) } : {};
  const fixes = o.corrections?.length ? sum(o.corrections) : undefined;
  const usage = o.usage && (fixes ? minus(o.usage, fixes) : o.usage);
  const entries: LedgerEntry[] = [{ kind: o.kind, ...base, ...(usage ? { usage, ...opt('nanoUsd', priced(usage)) } : {}), attempts: o.attempts, ...waste }];
  if (fixes) entries.push({ kind: 'correction', ...base, usage: fixes, ...opt('nanoUsd', priced(fixes)), attempts: o.corrections!.length });
  return entries;
}

/** What an entry adds under each heading: its reply (or corrections), and its failed attempts. */
function entryTallies(e: LedgerEntry): [CallKind, Tally][] {
  const out: [CallKind, Tally][] = [];
  const succeeded = e.usage ? 1 : 0;
  if (e.usage) out.push([e.kind, tallyOf(e.kind === 'correction' ? e.attempts : 1, e.usage, e.nanoUsd)]);
  const failed = e.kind === 'correction' ? 0 : e.attempts - succeeded;
  if (failed > 0 || e.wasted) out.push(['retry_waste', tallyOf(failed, e.wasted, e.wasted ? e.wastedNanoUsd : 0)]);
  return out;
}

/** The tally with these entries counted in (by heading and by model). */
export function countEntries(t: LedgerTally, entries: readonly LedgerEntry[]): LedgerTally {
  const byKind = { ...t.byKind };
  const byModel = { ...t.byModel };
  for (const e of entries) {
    for (const [k, tally] of entryTallies(e)) {
      byKind[k] = addTally(byKind[k], tally);
      byModel[e.model] = addTally(byModel[e.model] ?? emptyTally(), tally);
    }
  }
  return { byKind, byModel };
}

/** Two tallies added up (turns into a session). */
export function mergeTallies(a: LedgerTally, b: LedgerTally): LedgerTally {
  const byModel = { ...a.byModel };
  for (const [m, t] of Object.entries(b.byModel)) byModel[m] = addTally(byModel[m] ?? emptyTally(), t);
  return { byKind: Object.fromEntries(CALL_KINDS.map((k) => [k, addTally(a.byKind[k], b.byKind[k])])) as Record<CallKind, Tally>, byModel };
}

function opt<K extends string>(key: K, v: number | undefined): Partial<Record<K, number>> {
  return v === undefined ? {} : ({ [key]: v } as Record<K, number>);
}
