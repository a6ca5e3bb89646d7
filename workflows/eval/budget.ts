/**
 * An eval's budget (`harness eval --budget`): what its trials spent, by the cost each trial's
 * report carries (the ledger of its turn), and whether another may start. Once the trials run
 * have spent the budget no more start; those running finish, so an eval may pass it by up to
 * its concurrency's worth of trials. Only evals with a budget stop: the others start the same
 * children in the same order as before, so no patch.
 */
import type { BudgetLimit } from '../../deterministic/budget';
import type { EvalBudgetReport, TrialReport } from '../../deterministic/eval';
import { NANO } from '../../deterministic/pricing';

/** What an eval spent so far, as a run that continues as new hands it on. */
export interface SpendState {
  tokens: number;
  nanoUsd: number;
  unpriced: boolean;
  stopped: boolean;
}

export class EvalSpend {
  private tokens = 0;
  private nanoUsd = 0;
  private unpriced = false;
  stopped = false;

  constructor(
    private readonly budget: BudgetLimit | undefined,
    from?: SpendState,
  ) {
    if (from) ({ tokens: this.tokens, nanoUsd: this.nanoUsd, unpriced: this.unpriced, stopped: this.stopped } = from);
  }

  /** The spend so far, for the next run. */
  state(): SpendState {
    return { tokens: this.tokens, nanoUsd: this.nanoUsd, unpriced: this.unpriced, stopped: this.stopped };
  }

  /** Counts a finished trial's cost. */
  add(r: Pick<TrialReport, 'cost'>): void {
    if (!r.cost) return;
    this.tokens += r.cost.total_tokens;
    if (r.cost.usd === null) this.unpriced = true;
    else this.nanoUsd += Math.round(r.cost.usd * NANO);
  }

  /** Whether another trial may start; false once the budget is spent (and from then on). */
  allows(): boolean {
    const b = this.budget;
    if (!b || this.stopped) return !this.stopped;
    const over = (b.tokens !== undefined && this.tokens >= b.tokens) || (b.usd !== undefined && this.nanoUsd >= Math.round(b.usd * NANO));
    if (over) this.stopped = true;
    return !over;
  }

  /** The budget's part of the report. */
  report(notRun: EvalBudgetReport['not_run']): EvalBudgetReport {
    return {
      limit: this.budget ?? {},
      spent: { total_tokens: this.tokens, usd: this.unpriced ? null : this.nanoUsd / NANO },
      stopped: this.stopped,
      not_run: notRun,
    };
  }
}
