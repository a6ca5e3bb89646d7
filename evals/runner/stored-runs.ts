/**
 * An eval's trial reports read back from the message store, for an eval that kept them there
 * (its result counts them in `stored_runs` and carries none): the store the workers write to,
 * opened as `harness trace --full` opens it (DATABASE_URL, else the embedded database under
 * HARNESS_HOME). A report that carries its runs (an eval from before) is returned as it is.
 */
import type { EvalReport } from '../../deterministic/eval';
import { UserError } from '../../machine/errors';
import { openMessageStore } from '../../client/store-reader';
import { withStoredRuns } from '../../activities/eval-keep';

/** The report with every trial's report in its case, read from the store of the workers of `home` and `env`. */
export async function readStoredRuns(report: EvalReport, home: string, env: NodeJS.ProcessEnv): Promise<EvalReport> {
  if (report.stored_runs === undefined) return report;
  const opened = await openMessageStore(home, env);
  const hint = 'run it where DATABASE_URL or HARNESS_HOME is as the worker has it';
  if ('problem' in opened) throw new UserError(`the trial reports of ${report.eval_id} are in the message store, which cannot be read: ${opened.problem}`, hint);
  try {
    const kept = opened.store.evalTrials?.();
    if (!kept) throw new UserError(`the message store keeps no eval trial reports, so those of ${report.eval_id} cannot be read`, hint);
    const full = await withStoredRuns(report, kept);
    const read = full.cases.reduce((n, c) => n + c.runs.length, 0);
    if (read < report.stored_runs) throw new UserError(`${report.eval_id} stored ${report.stored_runs} trial reports, and ${read} are left in the message store`, 'a purge or `sessions prune` removed the others');
    return full;
  } finally {
    await opened.close();
  }
}
