/**
 * Where a model reply's text goes as it streams (migration 006): the pieces a worker stores while
 * the call runs, in the database of the message store, so a reader on any machine that reaches
 * that database (HarnessClient.events, the CLI's live lines) shows the text as it arrives. Each
 * write notifies `harness_model_stream` with the turn id, so readers of Postgres wake on LISTEN
 * (client/watch/stream-source.ts). Best effort, and never the record: the turn's history keeps
 * the finished reply, and rows are deleted after a few hours.
 *
 * Two implementations: Postgres (the message store's pool) and in memory (InMemoryMessageStore:
 * tests and benchmarks with no database), whose readers are in the same process.
 */
import type pg from 'pg';

/** The channel a stored piece is announced on (payload: the turn id, or '' when it would not fit). */
export const STREAM_CHANNEL = 'harness_model_stream';

/** Postgres refuses NOTIFY payloads of 8000 bytes or more: a longer turn id wakes every reader. */
const MAX_PAYLOAD_BYTES = 7_900;

/** One model call's stream (and the request's attempt that writes it). */
export interface StreamCall {
  sessionId: string;
  turnId: string;
  step: number;
  callIndex: number;
  /** The request's attempt: a request sent again starts its text over. */
  attempt: number;
}

/** A stored piece of a call's text. */
export interface StreamChunk {
  /** Its place in the call's stream, from 0, counted on across attempts. */
  seq: number;
  attempt: number;
  text: string;
  /** When it was stored (ISO 8601). */
  at: string;
}

/** What a worker writes through. */
export interface ModelStreams {
  /**
   * Stores a piece at `seq` (undefined: after the call's last stored piece) and announces it;
   * the seq it was stored at, or undefined when that place was taken (another attempt writes).
   */
  append(call: StreamCall, text: string, seq: number | undefined): Promise<number | undefined>;
  /** Deletes pieces stored more than `olderThanMs` ago; the number removed. */
  sweep(olderThanMs: number): Promise<number>;
}

/** Wakes a reader when a turn's stream may have grown. */
export interface StreamWatch {
  /** Resolves once pieces of the turn may have been stored since the last call (or a while passed, or `signal` aborted). */
  changed(signal?: AbortSignal): Promise<void>;
  dispose(): void;
}

/** What a reader reads through. */
export interface ModelStreamSource {
  /** The call's pieces from `fromSeq` on, in order. */
  read(turnId: string, step: number, callIndex: number, fromSeq: number): Promise<StreamChunk[]>;
  watch(turnId: string): StreamWatch;
  close(): Promise<void>;
}

// Pieces a read returns at most; a reader reads again from the last one.
const READ_PAGE = 500;

/** ModelStreams over a pool whose schema is migrated; unnamed statements (the embedded database serves readers of other processes too). */
export class PgModelStreams implements ModelStreams {
  constructor(private readonly pool: pg.Pool) {}

  async append(call: StreamCall, text: string, seq: number | undefined): Promise<number | undefined> {
    const payload = Buffer.byteLength(call.turnId, 'utf8') < MAX_PAYLOAD_BYTES ? call.turnId : '';
    // One statement: the row and its notification commit together.
    const r = await this.pool.query<{ seq: number }>(
      `WITH added AS (
         INSERT INTO model_stream_chunks (turn_id, step, call_index, seq, session_id, attempt, body)
         SELECT $1, $2, $3, COALESCE($4::integer, (SELECT max(seq) + 1 FROM model_stream_chunks WHERE turn_id = $1 AND step = $2 AND call_index = $3), 0), $5, $6, $7
         ON CONFLICT DO NOTHING
         RETURNING seq
       )
       SELECT seq, pg_notify($8, $9) FROM added`,
      [call.turnId, call.step, call.callIndex, seq ?? null, call.sessionId, call.attempt, Buffer.from(text, 'utf8'), STREAM_CHANNEL, payload],
    );
    return r.rows[0]?.seq;
  }

  async sweep(olderThanMs: number): Promise<number> {
    const r = await this.pool.query(`DELETE FROM model_stream_chunks WHERE at < now() - $1::double precision * interval '1 millisecond'`, [olderThanMs]);
    return r.rowCount ?? 0;
  }

  /** The call's pieces from `fromSeq` on (readers: PgStreamSource). */
  async read(turnId: string, step: number, callIndex: number, fromSeq: number): Promise<StreamChunk[]> {
    const out: StreamChunk[] = [];
    for (let from = fromSeq; ; ) {
      const r = await this.pool.query<{ seq: number; attempt: number; body: Buffer; at: Date }>(
        `SELECT seq, attempt, body, at FROM model_stream_chunks
         WHERE turn_id = $1 AND step = $2 AND call_index = $3 AND seq >= $4 ORDER BY seq LIMIT ${READ_PAGE}`,
        [turnId, step, callIndex, from],
      );
      out.push(...r.rows.map((row) => ({ seq: row.seq, attempt: row.attempt, text: row.body.toString('utf8'), at: new Date(row.at).toISOString() })));
      if (r.rows.length < READ_PAGE) return out;
      from = r.rows[r.rows.length - 1]!.seq + 1;
    }
  }

  /** Deletes a session's pieces (its purge). */
  async purge(sessionId: string): Promise<number> {
    return (await this.pool.query('DELETE FROM model_stream_chunks WHERE session_id = $1', [sessionId])).rowCount ?? 0;
  }
}

/**
 * Streams kept in memory, for a store with no database (tests, benchmarks): readers in the same
 * process read and watch them directly. Same rules as Postgres: seq taken is refused, sweep by age.
 */
export class InMemoryModelStreams implements ModelStreams, ModelStreamSource {
  private readonly calls = new Map<string, Array<StreamChunk & { sessionId: string; ms: number }>>();
  private readonly listeners = new Set<(turnId: string) => void>();

  async append(call: StreamCall, text: string, seq: number | undefined): Promise<number | undefined> {
    const key = keyOf(call.turnId, call.step, call.callIndex);
    const rows = this.calls.get(key) ?? [];
    const at = seq ?? (rows.length ? rows[rows.length - 1]!.seq + 1 : 0);
    if (rows.some((r) => r.seq === at)) return undefined;
    rows.push({ seq: at, attempt: call.attempt, text, at: new Date().toISOString(), sessionId: call.sessionId, ms: Date.now() });
    rows.sort((a, b) => a.seq - b.seq);
    this.calls.set(key, rows);
    for (const l of this.listeners) l(call.turnId);
    return at;
  }

  async sweep(olderThanMs: number): Promise<number> {
    let removed = 0;
    for (const [key, rows] of this.calls) {
      const kept = rows.filter((r) => Date.now() - r.ms <= olderThanMs);
      removed += rows.length - kept.length;
      if (kept.length) this.calls.set(key, kept);
      else this.calls.delete(key);
    }
    return removed;
  }

  async purge(sessionId: string): Promise<number> {
    let removed = 0;
    for (const [key, rows] of this.calls) {
      const kept = rows.filter((r) => r.sessionId !== sessionId);
      removed += rows.length - kept.length;
      this.calls.set(key, kept);
    }
    return removed;
  }

  async read(turnId: string, step: number, callIndex: number, fromSeq: number): Promise<StreamChunk[]> {
    return (this.calls.get(keyOf(turnId, step, callIndex)) ?? []).filter((r) => r.seq >= fromSeq).map(({ seq, attempt, text, at }) => ({ seq, attempt, text, at }));
  }

  watch(turnId: string): StreamWatch {
    const w = new DirtyWatch(0);
    const listener = (t: string) => t === turnId && w.wake();
    this.listeners.add(listener);
    return { changed: (signal) => w.changed(signal), dispose: () => this.listeners.delete(listener) };
  }

  async close(): Promise<void> {}
}

/**
 * A watch's waiting: changed() resolves at once when woken since the last call, else at the next
 * wake, after `fallbackMs` (0: never), or when the signal aborts. One wait is shared by callers.
 */
export class DirtyWatch {
  private dirty = false;
  private waiting?: { promise: Promise<void>; resolve: () => void };

  constructor(private readonly fallbackMs: number) {}

  wake(): void {
    if (this.waiting) this.waiting.resolve();
    else this.dirty = true;
  }

  changed(signal?: AbortSignal): Promise<void> {
    if (this.dirty || signal?.aborted) {
      this.dirty = false;
      return Promise.resolve();
    }
    if (this.waiting) return this.waiting.promise;
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    const timer = this.fallbackMs > 0 ? setTimeout(() => done(), this.fallbackMs).unref() : undefined;
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      if (this.waiting?.promise === promise) this.waiting = undefined;
      resolve();
    };
    signal?.addEventListener('abort', done, { once: true });
    this.waiting = { promise, resolve: done };
    return promise;
  }
}

function keyOf(turnId: string, step: number, callIndex: number): string {
  return `${turnId}\u0000${step}\u0000${callIndex}`;
}
