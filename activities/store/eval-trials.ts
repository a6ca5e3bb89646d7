/**
 * An eval's trial reports in the store (migration 008): written once as each trial ends, read back
 * together when the eval is done (its report) and by `harness eval` to show them. A trial's row
 * is keyed by its session, so a retried write changes nothing and the session's purge removes it.
 */
import type pg from 'pg';
import type { TrialReport } from '../../deterministic/eval';
import { asStoreError } from './errors';

/** Where an eval's trial reports are kept. */
export interface EvalTrials {
  /** Keeps one trial's report (again: left as it is). */
  put(evalId: string, report: TrialReport): Promise<void>;
  /** Keeps several trials' reports in one statement (each again: left as it is). */
  putMany(evalId: string, reports: readonly TrialReport[]): Promise<void>;
  /** Every trial report of the eval, by case and trial. */
  list(evalId: string): Promise<TrialReport[]>;
  /** Forgets the report of a trial's session; returns how many rows went. */
  purge(sessionId: string): Promise<number>;
}

/** Reports in Postgres or the embedded PGlite, over the store's pool. */
export class PgEvalTrials implements EvalTrials {
  constructor(private readonly pool: pg.Pool) {}

  async put(evalId: string, r: TrialReport): Promise<void> {
    await this.query(
      `INSERT INTO eval_trials (session_id, eval_id, case_id, trial, report) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (session_id) DO NOTHING`,
      [r.session_id, evalId, r.case_id, r.trial, Buffer.from(JSON.stringify(r), 'utf8')],
    );
  }

  async putMany(evalId: string, reports: readonly TrialReport[]): Promise<void> {
    if (!reports.length) return;
    const rows = reports.map((_, i) => `($${i * 4 + 2}, $1, $${i * 4 + 3}, $${i * 4 + 4}, $${i * 4 + 5})`);
    const values = reports.flatMap((r) => [r.session_id, r.case_id, r.trial, Buffer.from(JSON.stringify(r), 'utf8')]);
    await this.query(`INSERT INTO eval_trials (session_id, eval_id, case_id, trial, report) VALUES ${rows.join(', ')} ON CONFLICT (session_id) DO NOTHING`, [evalId, ...values]);
  }

  async list(evalId: string): Promise<TrialReport[]> {
    const r = await this.query<{ report: Buffer }>('SELECT report FROM eval_trials WHERE eval_id = $1 ORDER BY case_id, trial', [evalId]);
    return r.rows.map((row) => JSON.parse(row.report.toString('utf8')) as TrialReport);
  }

  async purge(sessionId: string): Promise<number> {
    return (await this.query('DELETE FROM eval_trials WHERE session_id = $1', [sessionId])).rowCount ?? 0;
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (err) {
      throw asStoreError(err);
    }
  }
}

/** Reports in this process's memory: the in-memory store's (tests, one process). */
export class InMemoryEvalTrials implements EvalTrials {
  private readonly bySession = new Map<string, { evalId: string; report: TrialReport }>();

  async put(evalId: string, report: TrialReport): Promise<void> {
    if (!this.bySession.has(report.session_id)) this.bySession.set(report.session_id, { evalId, report: structuredClone(report) });
  }

  async putMany(evalId: string, reports: readonly TrialReport[]): Promise<void> {
    for (const r of reports) await this.put(evalId, r);
  }

  async list(evalId: string): Promise<TrialReport[]> {
    const out = [...this.bySession.values()].filter((e) => e.evalId === evalId).map((e) => structuredClone(e.report));
    return out.sort((a, b) => (a.case_id < b.case_id ? -1 : a.case_id > b.case_id ? 1 : a.trial - b.trial));
  }

  async purge(sessionId: string): Promise<number> {
    return this.bySession.delete(sessionId) ? 1 : 0;
  }
}
