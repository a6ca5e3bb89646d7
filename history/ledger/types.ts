/**
 * The cost ledger's shapes: every model call of a turn counted once from the usage its activity
 * recorded, what failed attempts wasted apart, totals by kind of call and by model, for a turn,
 * a session or an eval run. Money is in nano-dollars (exact sums); absent when unpriced.
 */
import type { CallKind, LedgerEntry, Tally } from '../../deterministic/ledger';
import type { Pricing } from '../../deterministic/pricing';


/** One turn's ledger. */
export interface TurnLedger {
  turnId: string;
  turn: number;
  /** How its session priced the model (or the current table, for sessions from before prices). */
  pricing?: Pricing;
  terminated_by?: string;
  /** Each call (read from the turn's events); absent when the closed turn's recorded tally was read instead. */
  entries?: LedgerEntry[];
  byKind: Record<CallKind, Tally>;
  byModel: Record<string, Tally>;
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
