/**
 * The events a run of a turn has written to its history, counted by the workflow itself. The
 * turn continues as new once the count passes its budget. Temporal's own `historyLength` is not
 * used for that decision: it is the length at the start of the current workflow task, and when a
 * local activity outlives a workflow task (a loaded worker) replay resolves it earlier than the
 * original run did, so a decision based on it can differ on replay. This count is a function of
 * what the code did, so replay always reaches the same decision.
 */
import { RUN_EVENT_COST, RUN_START_VERSION_MARKERS } from './replay-constants';

// The events each kind of thing adds (with the workflow task that follows it) and the version
// markers a start is counted with are replay-relevant: they live in replay-constants.ts.
const COST = RUN_EVENT_COST;

/**
 * The run's start: the started event and first workflow task, the version markers of the turn's
 * `patched()` calls, and on the first run prepareTurn as an activity. Runs of the current code take
 * one marker and prepare in a local activity (a marker), yet count the same: the count decides
 * continue-as-new, so replay of every recorded run must reach the same decision (it only
 * over-counts new runs by a few events).
 */
const VERSION_MARKERS = RUN_START_VERSION_MARKERS;
const START = { fresh: 3 + VERSION_MARKERS + COST.activity, resumed: 3 + VERSION_MARKERS } as const;

export class RunEvents {
  private n: number;

  constructor(resumed: boolean) {
    this.n = resumed ? START.resumed : START.fresh;
  }

  add(kind: keyof typeof COST, times = 1): void {
    this.n += COST[kind] * times;
  }

  get count(): number {
    return this.n;
  }
}
