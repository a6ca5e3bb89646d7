/**
 * Trial reports the eval builds itself (patch `eval-trials-checked-here`): a trial whose checks
 * need nothing but its turn's result (deterministic/eval-trial-report.ts) is judged in the
 * workflow, with no local activity of its own, and its report is kept with others' in one store
 * statement. A batch is written once it holds BATCH reports, and what is left before the run ends
 * or continues as new (eval.ts). A report not yet written is built again on replay from its
 * turn's result in history, so a lost worker loses none.
 */
import { patched, proxyLocalActivities } from '@temporalio/workflow';
import type { TrialReport } from '../../deterministic/eval';
import { checkedInResult, resultReport, type TrialOf } from '../../deterministic/eval-trial-report';
import type { TurnResult } from '../../deterministic/session';
import type { Activities } from '../activity-options';
import { workflowNow } from '../workflow-clock';

// As the eval's other writes to its own store; a batch holds at most BATCH reports (a few KB each).
const { keepEvalTrials } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '500ms', maximumAttempts: 5 },
});

/** Trials judged in the eval's workflow (the patch of evals that judge them so). */
export const TRIALS_CHECKED_HERE = 'eval-trials-checked-here';

/** Reports written together: a local activity and a statement for this many trials. */
const BATCH = 16;

/** The reports of one run of an eval built in the workflow and not yet written. */
export class TrialReports {
  private pending: TrialReport[] = [];

  constructor(private readonly evalId: string) {}

  /**
   * The trial's report, built here and held for its batch; or undefined, and the checks activity
   * judges the trial (its checks read files, stored call records or history, or the eval is from
   * before the patch). Timed from the workflow's clock, as its start was.
   */
  checkHere(t: TrialOf, r: TurnResult, startedAtMs: number): TrialReport | undefined {
    if (!checkedInResult(t.case, r) || !patched(TRIALS_CHECKED_HERE)) return undefined;
    const report = resultReport(t, r, workflowNow() - startedAtMs);
    this.pending.push(report);
    return report;
  }

  /** Whether a batch is full: the eval writes it before it goes on. */
  get full(): boolean {
    return this.pending.length >= BATCH;
  }

  /** Writes every report held (none: no activity). */
  async flush(): Promise<void> {
    const reports = this.pending.splice(0);
    if (reports.length) await keepEvalTrials({ evalId: this.evalId, reports });
  }
}
