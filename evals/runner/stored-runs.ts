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

const HINT = 'run it with DATABASE_URL or HARNESS_HOME as the worker has them';

/**
 * The report with every trial's report in its case, read from the store of the workers of `home`
 * and `env`. When they cannot all be read, `warn` (given) is told why in one line and the report
 * is returned without its runs (its totals and cases are whole); without `warn` that is a UserError.
 */
export async function readStoredRuns(report: EvalReport, home: string, env: NodeJS.ProcessEnv, warn?: (line: string) => void): Promise<EvalReport> {
  if (report.stored_runs === undefined) return report;
  try {
    return await read(report, home, env);
  } catch (err) {
    if (!warn || !(err instanceof UserError)) throw err;
    warn(`${err.message}: the report has its totals and cases, not each trial's (${HINT})`);
    return report;
  }
}

async function read(report: EvalReport, home: string, env: NodeJS.ProcessEnv): Promise<EvalReport> {
  const opened = await openMessageStore(home, env);
  if ('problem' in opened) throw new UserError(`the trial reports of ${report.eval_id} are in the message store, which cannot be read (${opened.problem})`, HINT);
  try {
    const kept = opened.store.evalTrials?.();
    if (!kept) throw new UserError(`the message store keeps no eval trial reports, so those of ${report.eval_id} cannot be read`, HINT);
    const full = await withStoredRuns(report, kept);
    const read = full.cases.reduce((n, c) => n + c.runs.length, 0);
    if (read < report.stored_runs!) throw new UserError(`${report.eval_id} stored ${report.stored_runs} trial reports and ${read} are in this message store (another database, or a purge removed them)`, HINT);
    return full;
  } finally {
    await opened.close();
  }
}
