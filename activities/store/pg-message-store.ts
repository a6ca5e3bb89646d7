/**
 * The message store in Postgres (migration 005), over the pool long-term memory uses: the same
 * database, the same embedded PGlite and its lock, the same bounded timeouts. Each call is one
 * statement (arrays passed through unnest), and writes are `ON CONFLICT DO NOTHING`, so a
 * retried activity, or a retry after a write that timed out on the client but landed on the
 * server, changes nothing. Bodies travel as bytea (see the migration). The worker's statements are
 * named prepared statements, parsed and planned once per connection: a step's write (putChain)
 * then costs about 0.3 ms on the embedded PGlite instead of 0.5.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { asStoreError } from './errors';
import { StoreUnavailableError, type MessageStore, type StoredBlob, type StoredNode } from './message-store';
import { PgModelStreams } from './model-streams';
import { PgCallClaims } from './call-claims';
import { PgEvalTrials } from './eval-trials';

// Rows one purge statement deletes: a session of many megabytes is deleted in several short
// statements, each well inside the pool's statement timeout, instead of one that may not be.
const PURGE_BATCH = 2_000;

/** MessageStore over a `pg` pool whose schema is migrated (Database.messages() does both). */
export class PgMessageStore implements MessageStore {
  // Statement names: this store's own tag, then the connection's number (see query()).
  private readonly tag = randomBytes(4).toString('hex');
  private readonly prepare: boolean;

  /**
   * `prepare: false` sends every statement unnamed: for a reader connecting over TCP to the
   * embedded database another process serves, where a connection's prepared statements would
   * outlive it in the one shared backend.
   */
  constructor(
    private readonly pool: pg.Pool,
    opts: { prepare?: boolean } = {},
  ) {
    this.prepare = opts.prepare ?? true;
    // As MemoryStore does: an idle client whose server goes away must not crash the worker.
    if (pool.listenerCount('error') === 0) pool.on('error', () => undefined);
  }

  async putBlobs(sessionId: string, blobs: readonly StoredBlob[]): Promise<void> {
    const unique = firstByHash(blobs);
    if (unique.length === 0) return;
    await this.query(
      'put-blobs',
      `${TOUCH}
       INSERT INTO message_blobs (session_id, hash, body, bytes)
       SELECT $1, u.hash, u.body, octet_length(u.body) FROM unnest($2::text[], $3::bytea[]) AS u(hash, body)
       ON CONFLICT (session_id, hash) DO NOTHING`,
      [sessionId, unique.map((b) => b.hash), unique.map((b) => Buffer.from(b.body, 'utf8'))],
    );
  }

  async getBlobs(sessionId: string, hashes: readonly string[]): Promise<Map<string, string>> {
    const wanted = [...new Set(hashes)];
    if (wanted.length === 0) return new Map();
    const r = await this.query<{ hash: string; body: Buffer }>(
      'get-blobs',
      'SELECT hash, body FROM message_blobs WHERE session_id = $1 AND hash = ANY($2::text[])',
      [sessionId, wanted],
    );
    return new Map(r.rows.map((row) => [row.hash, row.body.toString('utf8')]));
  }

  async putNodes(sessionId: string, nodes: readonly StoredNode[]): Promise<void> {
    const unique = firstByHash(nodes);
    if (unique.length === 0) return;
    await this.query(
      'put-nodes',
      `${TOUCH}
       INSERT INTO message_nodes (session_id, hash, parent, blob)
       SELECT $1, u.hash, u.parent, u.blob FROM unnest($2::text[], $3::text[], $4::text[]) AS u(hash, parent, blob)
       ON CONFLICT (session_id, hash) DO NOTHING`,
      [sessionId, unique.map((n) => n.hash), unique.map((n) => n.parent), unique.map((n) => n.blob)],
    );
  }

  async putChain(sessionId: string, blobs: readonly StoredBlob[], nodes: readonly StoredNode[]): Promise<void> {
    const b = firstByHash(blobs);
    const n = firstByHash(nodes);
    if (b.length === 0 && n.length === 0) return;
    // One statement, so one round trip and one commit: a node is never visible without its body.
    await this.query(
      'put-chain',
      `${TOUCH},
       bodies AS (
         INSERT INTO message_blobs (session_id, hash, body, bytes)
         SELECT $1, u.hash, u.body, octet_length(u.body) FROM unnest($2::text[], $3::bytea[]) AS u(hash, body)
         ON CONFLICT (session_id, hash) DO NOTHING
       )
       INSERT INTO message_nodes (session_id, hash, parent, blob)
       SELECT $1, u.hash, u.parent, u.blob FROM unnest($4::text[], $5::text[], $6::text[]) AS u(hash, parent, blob)
       ON CONFLICT (session_id, hash) DO NOTHING`,
      [
        sessionId,
        b.map((x) => x.hash),
        b.map((x) => Buffer.from(x.body, 'utf8')),
        n.map((x) => x.hash),
        n.map((x) => x.parent),
        n.map((x) => x.blob),
      ],
    );
  }

  async readChain(sessionId: string, head: string): Promise<StoredNode[]> {
    // From the head through parents, one index lookup per link; ends at the root or at a
    // parent that is not there, which the check below tells apart.
    const r = await this.query<{ hash: string; parent: string | null; blob: string }>(
      'read-chain',
      `WITH RECURSIVE chain (hash, parent, blob, depth) AS (
         SELECT hash, parent, blob, 0 FROM message_nodes WHERE session_id = $1 AND hash = $2
         UNION ALL
         SELECT n.hash, n.parent, n.blob, c.depth + 1
         FROM chain c JOIN message_nodes n ON n.session_id = $1 AND n.hash = c.parent
       )
       SELECT hash, parent, blob FROM chain ORDER BY depth DESC`,
      [sessionId, head],
    );
    const root = r.rows[0];
    const missing = root === undefined ? head : root.parent;
    if (missing !== null) {
      throw new StoreUnavailableError(`conversation node ${missing} of session ${sessionId} is missing from the message store (chain ending at ${head})`);
    }
    return r.rows.map((row) => ({ hash: row.hash, parent: row.parent, blob: row.blob }));
  }

  async purge(sessionId: string): Promise<number> {
    let removed = 0;
    for (const table of ['message_nodes', 'message_blobs'] as const) {
      for (;;) {
        const r = await this.query(
          `purge-${table}`,
          `DELETE FROM ${table} t USING (SELECT hash FROM ${table} WHERE session_id = $1 LIMIT ${PURGE_BATCH}) d
           WHERE t.session_id = $1 AND t.hash = d.hash`,
          [sessionId],
        );
        removed += r.rowCount ?? 0;
        if ((r.rowCount ?? 0) < PURGE_BATCH) break;
      }
    }
    // The text its model calls streamed (kept a few hours otherwise).
    removed += await this.modelStreams().purge(sessionId).catch((err: unknown) => {
      throw asStoreError(err);
    });
    // Its calls' claims: no attempt of them can come any more.
    removed += await this.callClaims().purge(sessionId);
    // An eval trial's report.
    removed += await this.evalTrials().purge(sessionId);
    // Last: until the rows are gone, retention keeps finding the session.
    await this.query('purge-session', 'DELETE FROM message_sessions WHERE session_id = $1', [sessionId]);
    return removed;
  }

  /** Streamed model text, in the same database and over the same pool. */
  modelStreams(): PgModelStreams {
    return (this.streams ??= new PgModelStreams(this.pool));
  }

  private streams?: PgModelStreams;

  /** Claims of calls that must not run twice, in the same database and over the same pool. */
  callClaims(): PgCallClaims {
    return (this.claims ??= new PgCallClaims(this.pool));
  }

  private claims?: PgCallClaims;

  /** Eval trial reports, in the same database and over the same pool. */
  evalTrials(): PgEvalTrials {
    return (this.trials ??= new PgEvalTrials(this.pool));
  }

  private trials?: PgEvalTrials;

  async sessionsIdleSince(before: Date): Promise<string[]> {
    const r = await this.query<{ session_id: string }>('idle-sessions', 'SELECT session_id FROM message_sessions WHERE last_write < $1 ORDER BY last_write, session_id', [before]);
    return r.rows.map((row) => row.session_id);
  }

  // `pg` prepares a name once per connection and reuses it. The embedded PGlite serves every
  // connection, of every process and every store, from one backend, where names are shared: so a
  // name carries this store's random tag and its connection's number. A failed query releases
  // its connection with the error, which discards it from the pool (as pool.query does).
  private async query<R extends pg.QueryResultRow>(name: string, text: string, values: unknown[]): Promise<pg.QueryResult<R>> {
    if (!this.prepare) {
      try {
        return await this.pool.query<R>(text, values);
      } catch (err) {
        throw asStoreError(err);
      }
    }
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw asStoreError(err);
    }
    try {
      const result = await client.query<R>({ name: `store-${name}-${this.tag}-${this.numberOf(client)}`, text, values });
      client.release();
      return result;
    } catch (err) {
      client.release(err as Error);
      throw asStoreError(err);
    }
  }

  private readonly numbers = new WeakMap<pg.PoolClient, number>();
  private next = 0;

  /** The connection's own number, for the names of the statements it prepares. */
  private numberOf(client: pg.PoolClient): number {
    let n = this.numbers.get(client);
    if (n === undefined) {
      n = this.next++;
      this.numbers.set(client, n);
    }
    return n;
  }
}

// Every write also records the session's last write (for sessionsIdleSince), in the same
// statement; a rewrite of stored rows counts too: the session is active.
const TOUCH = `WITH touched AS (
  INSERT INTO message_sessions (session_id) VALUES ($1)
  ON CONFLICT (session_id) DO UPDATE SET last_write = now()
)`;

/** The first item of each hash: a store leaves a stored hash as it is, so the first one wins. */
function firstByHash<T extends { hash: string }>(items: readonly T[]): T[] {
  const seen = new Set<string>();
  return items.filter((i) => {
    if (seen.has(i.hash)) return false;
    seen.add(i.hash);
    return true;
  });
}
