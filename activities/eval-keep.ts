/**
 * An eval that keeps its trial reports in the store (workflows/eval/eval.ts, from
 * `eval-continue-as-new`): each trial's report written there as its checks end, and the eval's
 * report built there at the end: totals and cases from every stored run, returned without the
 * runs (a 2,000-trial eval's runs are megabytes; Temporal's payload limit is 2 MB), which
 * `harness eval` reads back from the store.
 */
import type { CaseHead, CaseReport, EvalReport, EvalTotals, TrialReport, TrialTally } from '../deterministic/eval';
import { caseReport, summarize } from '../deterministic/eval-report';
import type { CheckEvalTrialInput } from './eval';
import type { EvalTrials } from './store/eval-trials';
import type { MessageStore } from './store/message-store';
import { StoreUnavailableError } from './store/message-store';
import { withStore } from './store/errors';

interface EvalKeepDeps {
  messages: () => Promise<MessageStore>;
  /** The trial's checks (checkEvalTrial). */
  check: (input: CheckEvalTrialInput) => Promise<TrialReport>;
}

/** What the eval's report is built from: its cases' heads and the trials it never started. */
export interface FinishEvalInput {
  evalId: string;
  cases: CaseHead[];
  notRun: { case_id: string; trial: number }[];
}

export function createEvalKeepActivities(deps: EvalKeepDeps) {
  const trials = async (): Promise<EvalTrials> => {
    const kept = (await deps.messages()).evalTrials?.();
    if (!kept) throw new StoreUnavailableError('the message store of this worker keeps no eval trial reports');
    return kept;
  };
  return {
    /** Runs the trial's checks and keeps its report in the store; returns what the eval counts. */
    async checkAndKeepEvalTrial(input: CheckEvalTrialInput & { evalId: string }): Promise<TrialTally> {
      const { evalId, ...check } = input;
      const report = await deps.check(check);
      await withStore(async () => (await trials()).put(evalId, report));
      return tallyOf(report);
    },

    /** Keeps a report the workflow made itself (a trial whose turn failed). */
    async keepEvalTrial(input: { evalId: string; report: TrialReport }): Promise<void> {
      await withStore(async () => (await trials()).put(input.evalId, input.report));
    },

    /** Keeps the reports the workflow built itself from its trials' results, several in one statement. */
    async keepEvalTrials(input: { evalId: string; reports: TrialReport[] }): Promise<void> {
      await withStore(async () => (await trials()).putMany(input.evalId, input.reports));
    },

    /** The eval's totals and cases from its stored runs; the runs themselves stay in the store. */
    async finishEvalReport(input: FinishEvalInput): Promise<{ totals: EvalTotals; cases: CaseReport[]; stored_runs: number }> {
      const runs = await withStore(async () => (await trials()).list(input.evalId));
      const { totals, cases } = buildCases(input.cases, runs, input.notRun);
      return { totals, cases: cases.map((c) => ({ ...c, runs: [] })), stored_runs: runs.length };
    },
  };
}

/** The cases over their runs and the totals, as the eval has always reported them. */
export function buildCases(heads: readonly CaseHead[], runs: readonly TrialReport[], notRun: FinishEvalInput['notRun']): { totals: EvalTotals; cases: CaseReport[] } {
  const byCase = groupByCase(runs);
  const left = new Map<string, number>();
  for (const j of notRun) left.set(j.case_id, (left.get(j.case_id) ?? 0) + 1);
  const cases = heads.map((c) => ({ ...caseReport(c, byCase.get(c.id) ?? []), ...(left.get(c.id) ? { not_run: left.get(c.id)! } : {}) }));
  return { totals: summarize(cases), cases };
}

/** The report with its runs read back from the store (`harness eval`); a report that carries its runs is returned as it is. */
export async function withStoredRuns(report: EvalReport, kept: EvalTrials): Promise<EvalReport> {
  if (report.stored_runs === undefined) return report;
  const byCase = groupByCase(await kept.list(report.eval_id));
  return { ...report, cases: report.cases.map((c) => ({ ...c, runs: (byCase.get(c.id) ?? []).sort((a, b) => a.trial - b.trial) })) };
}

function groupByCase(runs: readonly TrialReport[]): Map<string, TrialReport[]> {
  const byCase = new Map<string, TrialReport[]>();
  for (const r of runs) {
    const list = byCase.get(r.case_id);
    if (list) list.push(r);
    else byCase.set(r.case_id, [r]);
  }
  return byCase;
}

function tallyOf(r: TrialReport): TrialTally {
  return { case_id: r.case_id, trial: r.trial, passed: r.passed, rate_limited: r.rate_limited, ...(r.cost ? { cost: r.cost } : {}) };
}
