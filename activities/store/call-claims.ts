/**
 * Claims of calls that must not run twice (tools/at-most-once.ts), in the store's database
 * (migration 007), so every worker of a queue sees them wherever it runs: the guarantee no longer
 * depends on the workers sharing a disk. A claim is one row, inserted before the call runs; its
 * result is written into the row once there is one. Both are single statements that the database
 * orders: of two attempts claiming at once one inserts the row, and of two results the first
 * written stays (`COALESCE`), and is what both get back.
 */
import type pg from 'pg';
import type { ToolResult } from '../../deterministic/types';
import { asStoreError } from './errors';

/** What a claim found: this attempt may run the call, or an earlier one finished, or started and never finished. */
export type Claim = { kind: 'run' } | { kind: 'done'; result: ToolResult } | { kind: 'unfinished'; by: string };

/** Where claims are kept (the store's database; a single worker's disk when the store has none). */
export interface CallClaims {
  /** Claims call `key` of the session for the attempt `by` (host and process), before the call runs. */
  claim(sessionId: string, key: string, by: string): Promise<Claim>;
  /** Records the call's result once; the first recorded wins, and is returned. */
  settle(sessionId: string, key: string, result: ToolResult): Promise<ToolResult>;
  /** Forgets the session's claims (it ended or is purged: no attempt of its calls can come); returns how many. */
  purge(sessionId: string): Promise<number>;
}

/** Claims in Postgres or the embedded PGlite, over the store's pool. */
export class PgCallClaims implements CallClaims {
  constructor(private readonly pool: pg.Pool) {}

  async claim(sessionId: string, key: string, by: string): Promise<Claim> {
    // Inserted, or the row already there: one statement either way (the CTE sees the row as it was).
    const r = await this.query<{ inserted: boolean; claimed_by: string; result: Buffer | null }>(
      `WITH ins AS (
         INSERT INTO call_claims (session_id, key, claimed_by) VALUES ($1, $2, $3)
         ON CONFLICT (session_id, key) DO NOTHING RETURNING claimed_by
       )
       SELECT true AS inserted, claimed_by, NULL::bytea AS result FROM ins
       UNION ALL
       SELECT false, claimed_by, result FROM call_claims WHERE session_id = $1 AND key = $2 AND NOT EXISTS (SELECT 1 FROM ins)`,
      [sessionId, key, by],
    );
    const row = r.rows[0];
    if (!row) return this.claim(sessionId, key, by); // the row was purged between the two: claim again
    if (row.inserted) return { kind: 'run' };
    if (row.result) return { kind: 'done', result: parseResult(row.result) };
    return { kind: 'unfinished', by: row.claimed_by };
  }

  async settle(sessionId: string, key: string, result: ToolResult): Promise<ToolResult> {
    const body = Buffer.from(JSON.stringify(result), 'utf8');
    // The row lock orders two attempts settling at once: the second sees the first's result.
    const r = await this.query<{ result: Buffer }>(
      `INSERT INTO call_claims (session_id, key, claimed_by, result) VALUES ($1, $2, 'settled without a claim', $3)
       ON CONFLICT (session_id, key) DO UPDATE SET result = COALESCE(call_claims.result, EXCLUDED.result)
       RETURNING result`,
      [sessionId, key, body],
    );
    const stored = r.rows[0]?.result;
    return stored ? parseResult(stored) : result;
  }

  async purge(sessionId: string): Promise<number> {
    return (await this.query('DELETE FROM call_claims WHERE session_id = $1', [sessionId])).rowCount ?? 0;
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(text, values);
    } catch (err) {
      throw asStoreError(err);
    }
  }
}

/** Claims in this process's memory: the in-memory store's (tests, one process). */
export class InMemoryCallClaims implements CallClaims {
  private readonly rows = new Map<string, Map<string, { by: string; result?: ToolResult }>>();

  async claim(sessionId: string, key: string, by: string): Promise<Claim> {
    const m = this.of(sessionId);
    const row = m.get(key);
    if (!row) {
      m.set(key, { by });
      return { kind: 'run' };
    }
    return row.result ? { kind: 'done', result: row.result } : { kind: 'unfinished', by: row.by };
  }

  async settle(sessionId: string, key: string, result: ToolResult): Promise<ToolResult> {
    const m = this.of(sessionId);
    const row = m.get(key) ?? { by: 'settled without a claim' };
    row.result ??= result;
    m.set(key, row);
    return row.result;
  }

  async purge(sessionId: string): Promise<number> {
    const n = this.rows.get(sessionId)?.size ?? 0;
    this.rows.delete(sessionId);
    return n;
  }

  private of(sessionId: string) {
    let m = this.rows.get(sessionId);
    if (!m) this.rows.set(sessionId, (m = new Map()));
    return m;
  }
}

function parseResult(body: Buffer): ToolResult {
  return JSON.parse(body.toString('utf8')) as ToolResult;
}
