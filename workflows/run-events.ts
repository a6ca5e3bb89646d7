/**
 * The events a run of a turn has written to its history, counted by the workflow itself. The
 * turn continues as new once the count passes its budget. Temporal's own `historyLength` is not
 * used for that decision: it is the length at the start of the current workflow task, and when a
 * local activity outlives a workflow task (a loaded worker) replay resolves it earlier than the
 * original run did, so a decision based on it can differ on replay. This count is a function of
 * what the code did, so replay always reaches the same decision.
 */

/** Events each kind of thing adds, with the workflow task that follows it (scheduled, started, completed). */
const COST = {
  /** An activity: scheduled, started, completed, and the next workflow task. */
  activity: 6,
  /** A local activity: its marker (it resolves within the workflow task). */
  local: 1,
  /** A signal or update that arrives (its event or two) and the workflow task it wakes. */
  message: 5,
  /** Waiting on a human: the signals to the session around the wait and a timer. */
  wait: 8,
} as const;

/**
 * The run's start: the started event and first workflow task, the version markers of the turn's
 * `patched()` calls (a marker and a search-attribute update each, about ten of them, in runs
 * recorded before turn-patches-1), and on the first run prepareTurn as an activity. Runs of
 * today's code take one marker and prepare in a local activity (a marker), yet count the same:
 * the count decides continue-as-new, so replay of every recorded run must reach the same
 * decision (it only over-counts new runs by a few events).
 */
const VERSION_MARKERS = 20;
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
