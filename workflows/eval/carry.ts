/**
 * What an eval hands on when it continues as new (from `eval-continue-as-new`): its trial reports
 * are in the store, so a run keeps only counters, and after a few hundred trials (or when Temporal
 * suggests it) it lets the trials it started finish and continues as new with these. Its history
 * and its memory stay bounded whatever the suite's size; a 2,000-trial eval is about ten runs.
 */
import type { SpendState } from './budget';

/** Trials one run of an eval starts before it continues as new: about 10 history events each. */
export const DEFAULT_TRIALS_PER_RUN = 200;

export interface EvalCarry {
  /** When the eval's first run started (the report's `started_at`). */
  startedAt: string;
  /** Trials started so far, all finished: the next run starts at this job. */
  next: number;
  /** Trials finished, and of those passed. */
  done: number;
  passed: number;
  /** The concurrency as the last run left it: its limit, how often it was lowered, the calm trials since. */
  limit: number;
  lowered: number;
  calm: number;
  /** What the trials spent (`--budget`). */
  spent: SpendState;
}
