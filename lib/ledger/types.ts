/**
 * The cost ledger's shapes: every model call of a turn counted once from the usage its activity
 * recorded, what failed attempts wasted apart, totals by kind of call and by model, for a turn,
 * a session or an eval run. Money is in nano-dollars (exact sums); absent when unpriced.
 */
import type { Pricing } from '../../common/pricing';
import type { Usage } from '../../common/types';

/** Headings of the ledger: turn model calls, compression summaries, text-protocol corrections, wasted attempts. */
export type CallKind = 'model' | 'compression' | 'correction' | 'retry_waste';

/** One model call (or compression) as history recorded it. */
export interface LedgerEntry {
  kind: Exclude<CallKind, 'retry_waste'>;
  step: number;
  callIndex?: number;
  model: string;
  /** The usage of the reply that counted (absent: no attempt succeeded). */
  usage?: Usage;
  /** Attempts it took; every one but the one that succeeded is waste. */
  attempts: number;
  /** Tokens the failed attempts used, when the provider reported them. */
  wasted?: Usage;
  nanoUsd?: number;
  wastedNanoUsd?: number;
}

/** A sum of calls: how many, tokens, and money when every part was priced. */
export interface Tally {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  total_tokens: number;
  nanoUsd?: number;
}

/** One turn's ledger. */
export interface TurnLedger {
  turnId: string;
  turn: number;
  /** How its session priced the model (or the current table, for sessions from before prices). */
  pricing?: Pricing;
  terminated_by?: string;
  entries: LedgerEntry[];
  byKind: Record<CallKind, Tally>;
  total: Tally;
}

/** The ledger of a turn, a session (every turn, across continue-as-new) or an eval run (every trial). */
export interface Ledger {
  kind: 'turn' | 'session' | 'eval';
  id: string;
  turns: TurnLedger[];
  byKind: Record<CallKind, Tally>;
  byModel: Record<string, Tally>;
  total: Tally;
  /** `all` priced, `some`, or `none` (tokens only). */
  priced: 'all' | 'some' | 'none';
  notes: string[];
}
