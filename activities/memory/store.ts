/**
 * Long-term memory in Postgres through `pg`: remember, recall (relevance × recency), recent.
 * The same code serves a real server (DATABASE_URL) and the embedded PGlite socket server.
 */
import type pg from 'pg';
import { asMemoryError, isUnavailable } from './errors';
import { migrate } from './migrate';
import { planQuery } from './query';


/** A recalled memory with its combined score (higher is better). */
interface RecalledMemory {
  id: number;
  text: string;
  created_at: Date;
  session_id: string | null;
  score: number;
}

/** A memory listed by recency. */
interface StoredMemory {
  id: number;
  text: string;
  created_at: Date;
  session_id: string | null;
}

// Recency multiplies relevance by (1 - W) + W * exp(-age / TAU): equally relevant memories
// come newest first, while a clearly better match from last month still beats a weak new one.
const RECENCY_WEIGHT = 0.2;
const RECENCY_TAU_SECONDS = 30 * 24 * 3600;
// Full-text rank for a single hit is about 0.06-0.1; scaled so a good hit approaches 1.
const FTS_SCALE = 10;
const FTS_WEIGHT = 0.4;
const COVERAGE_WEIGHT = 0.6;
// Known words within trigram similarity 0.3 (pg_trgm's default) that stand in for a query word.
const MAX_CORRECTIONS = 2;
// Known longer words containing a query word, searched with it (prefix-like matching).
const MAX_EXTENSIONS = 3;
// Rows that get the exact score; far more than any top_k (at most 50).
const CANDIDATES = 200;
// Soft cap on rows one GIN scan returns (see recall).
const GIN_SAMPLE = 500;

/** Long-term memories of all namespaces in one table, each call scoped to one namespace. */
export class MemoryStore {
  constructor(private readonly pool: pg.Pool) {
    // An idle client whose server goes away emits 'error' on the pool; unhandled, it would
    // crash the worker, whereas the next query reports MemoryUnavailableError anyway.
    if (pool.listenerCount('error') === 0) pool.on('error', () => undefined);
  }

  /** Creates or upgrades the schema (idempotent, safe with concurrent workers). */
  async migrate(): Promise<number[]> {
    return migrate(this.pool);
  }

  /**
   * Stores a memory and returns its id. With a `requestKey` (the tool call's turn and call id)
   * the write is idempotent per namespace: a retried activity, or a retry after a write that
   * timed out but landed later, finds the row already there and gets its id instead of a
   * second row. `createdAt` is for imports and tests, normally the server's now().
   */
  async remember(namespace: string, sessionId: string | null, text: string, opts: { createdAt?: Date; requestKey?: string } = {}): Promise<{ id: number }> {
    const requestKey = opts.requestKey ?? null;
    // Twice at most: the row that conflicted can be deleted (forgetNamespace) before we read it.
    for (let attempt = 0; attempt < 2; attempt++) {
      const inserted = await this.query<{ id: string }>(
        `INSERT INTO memories (namespace, session_id, text, created_at, request_key) VALUES ($1, $2, $3, coalesce($4, now()), $5)
         ON CONFLICT (namespace, request_key) WHERE request_key IS NOT NULL DO NOTHING
         RETURNING id`,
        [namespace, sessionId, text, opts.createdAt ?? null, requestKey],
      );
      if (inserted.rows[0]) return { id: Number(inserted.rows[0].id) };
      // A separate statement, so its snapshot sees a conflicting row committed while the insert waited.
      const existing = await this.query<{ id: string }>('SELECT id FROM memories WHERE namespace = $1 AND request_key = $2', [namespace, requestKey]);
      if (existing.rows[0]) return { id: Number(existing.rows[0].id) };
    }
    throw new Error(`memory with request key ${requestKey} conflicted but could not be read back`);
  }

  /** The topK memories of the namespace most relevant to the query, recent ones favoured. */
  async recall(namespace: string, query: string, topK = 5): Promise<RecalledMemory[]> {
    const plan = planQuery(query);
    const items = plan.fuzzyTerms.length + plan.bigrams.length + plan.patterns.length;
    if (!plan.tsquery && items === 0) return [];
    return this.transaction(async (client) => {
      // The planner prefers a (parallel) sequential scan once a common word matches ~10% of
      // rows; the index path is about twice as fast there and far faster everywhere else.
      // gin_fuzzy_search_limit: a word in 10% of the memories would otherwise make every
      // recall rank thousands of rows; the index returns a sample of about that many instead.
      // Each word has its own arm, so a rare word's matches are never sampled away.
      await client.query(
        `SET LOCAL enable_seqscan = off; SET LOCAL max_parallel_workers_per_gather = 0; SET LOCAL gin_fuzzy_search_limit = ${GIN_SAMPLE}`,
      );
      const termQueries = await expandTerms(client, plan.fuzzyTerms);
      const termPatterns = plan.fuzzyTerms.map((t) => `%${t}%`); // letters and digits only: no wildcards to escape
      // Bigrams are letters only (no tsquery syntax); quoting makes each a literal lexeme.
      const cjkQuery = plan.bigrams.map((b) => `'${b}'`).join(' | ');
      const wordsQuery = termQueries.filter((q) => q !== '').map((q) => `(${q})`).join(' | ');
      const params: unknown[] = [namespace, plan.tsquery, termQueries, termPatterns, Math.max(1, items), topK, plan.bigrams, plan.patterns, wordsQuery, cjkQuery, plan.plainWords];
      const fullQuery = "(coalesce(to_tsquery('english', $2), ''::tsquery) || $9::tsquery)";
      // Candidates come from one bounded subquery per kind of match, never one big OR (which
      // the planner runs as a scan of the whole namespace), and a common word can match
      // thousands of rows: each arm keeps its best few, and only those get the exact score.
      const pick = (where: string, order: string) =>
        `(SELECT m.id FROM memories m WHERE m.namespace = $1 AND ${where} ORDER BY ${order} LIMIT ${CANDIDATES})`;
      const arms = [
        ...termQueries.flatMap((q, i) => (q ? [pick(`m.tsv @@ ($3::text[])[${i + 1}]::tsquery`, `ts_rank(m.tsv, ${fullQuery}) DESC, m.created_at DESC`)] : [])),
        ...plan.plainWords.map((_, i) => pick(`m.tsv @@ to_tsquery('english', ($11::text[])[${i + 1}])`, `ts_rank(m.tsv, ${fullQuery}) DESC, m.created_at DESC`)),
        ...(cjkQuery ? [pick('m.cjk @@ $10::tsquery', 'ts_rank(m.cjk, $10::tsquery) DESC, m.created_at DESC')] : []),
        // A lone CJK character has no bigram: substring through the trigram index. The `+ 0s`
        // stops the planner from walking the created_at index until LIMIT rows match.
        ...plan.patterns.map((_, i) => pick(`m.text ILIKE ($8::text[])[${i + 1}]`, "m.created_at + interval '0s' DESC")),
      ];
      // relevance = full-text rank (capped at 1) + coverage, the share of query terms (a word
      // with its corrections and extensions, or its substring; a CJK bigram) the memory holds.
      const sql = `
        WITH typed AS (SELECT $9::tsquery, $10::tsquery, $11::text[]), -- unused; fixes the types of optional parameters
             cand AS (${arms.join(' UNION ')})
        SELECT id, text, created_at, session_id,
               (${FTS_WEIGHT} * fts + ${COVERAGE_WEIGHT} * coverage)
                 * (${1 - RECENCY_WEIGHT} + ${RECENCY_WEIGHT} * exp(-greatest(0, extract(epoch FROM now() - created_at)) / ${RECENCY_TAU_SECONDS})) AS score
        FROM (
          SELECT c.id, c.text, c.created_at, c.session_id,
                 CASE WHEN $2::text IS NULL THEN 0
                      ELSE least(1, ts_rank(c.tsv, to_tsquery('english', $2)) * ${FTS_SCALE}) END AS fts,
                 ((SELECT count(*) FROM unnest($3::text[], $4::text[]) u(q, p) WHERE c.tsv @@ q::tsquery OR c.text ILIKE p)
                  + (SELECT count(*) FROM unnest(tsvector_to_array(c.cjk)) g WHERE g = ANY($7::text[]))
                  + (SELECT count(*) FROM unnest($8::text[]) p WHERE c.text ILIKE p))::float8 / $5 AS coverage
          FROM cand JOIN memories c USING (id)
        ) s
        ORDER BY score DESC, id DESC
        LIMIT $6`;
      const r = await client.query<{ id: string; text: string; created_at: Date; session_id: string | null; score: number }>(sql, params);
      return r.rows.map((row) => ({ ...row, id: Number(row.id), score: Number(row.score) }));
    });
  }

  /** The n newest memories of the namespace, newest first (for preloading the system message). */
  async recent(namespace: string, n = 10): Promise<StoredMemory[]> {
    const r = await this.query<{ id: string; text: string; created_at: Date; session_id: string | null }>(
      'SELECT id, text, created_at, session_id FROM memories WHERE namespace = $1 ORDER BY created_at DESC, id DESC LIMIT $2',
      [namespace, n],
    );
    return r.rows.map((row) => ({ ...row, id: Number(row.id) }));
  }

  /** Deletes every memory of a namespace (eval cases start fresh); returns how many. */
  async forgetNamespace(namespace: string): Promise<number> {
    const r = await this.query('DELETE FROM memories WHERE namespace = $1', [namespace]);
    return r.rowCount ?? 0;
  }

  private async transaction<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw asMemoryError(err);
    }
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      // A connection that timed out or broke is in an unknown state: discard it without a
      // ROLLBACK that would wait on it again (the server aborts the transaction when it goes).
      if (isUnavailable(err)) broken = err as Error;
      else await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw asMemoryError(err);
    } finally {
      // A connection that could not even roll back is discarded rather than reused.
      client.release(broken);
    }
  }

  // pool.query releases the client with the error on failure, which discards it from the pool.
  private async query<R extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(sql, params);
    } catch (err) {
      throw asMemoryError(err);
    }
  }
}

/**
 * For each term, a tsquery of the term OR the known words (memory_words, migration 003) that
 * contain it ("postgres" → "postgresql") and, for a word never seen, its closest spellings
 * (trigram similarity): the trigram index finds them in a small table, not among all memories.
 */
async function expandTerms(client: pg.PoolClient, terms: string[]): Promise<string[]> {
  if (terms.length === 0) return [];
  const r = await client.query<{ q: string }>(
    `SELECT to_tsquery('english', array_to_string(t || array(
              (SELECT word FROM memory_words WHERE word LIKE '%' || t || '%' AND word <> t ORDER BY length(word), word LIMIT ${MAX_EXTENSIONS})
              UNION
              (SELECT word FROM memory_words WHERE word % t AND NOT EXISTS (SELECT 1 FROM memory_words WHERE word = t)
               ORDER BY similarity(word, t) DESC, word LIMIT ${MAX_CORRECTIONS})), ' | '))::text AS q
     FROM unnest($1::text[]) WITH ORDINALITY AS u(t, n) ORDER BY n`,
    [terms],
  );
  return r.rows.map((row) => row.q);
}
