/**
 * Reading model text as workers stream it (activities/store/model-streams.ts), from the database
 * the workers write to: DATABASE_URL, else the embedded PGlite under HARNESS_HOME read through the
 * process that holds it (machine/store-endpoint.ts), as `trace --full` reads the message store.
 * Never creates a database, never migrates: no database, or one without the table, is no stream.
 *
 * Postgres tells a reader when a turn's stream grew (LISTEN harness_model_stream), so a reader
 * sleeps until then; it reads again after a few seconds anyway, in case a notification was lost
 * with a connection. The embedded PGlite is one backend that answers each connection its own
 * statements' results: a notification goes to the connection that sent it, never to a listener on
 * another, so there the reader reads every 100 ms while a call runs (it is on the worker's machine:
 * a local read).
 */
import { existsSync } from 'node:fs';
import type pg from 'pg';
import { embeddedDataDir } from '../../machine/paths';
import { readStoreEndpoint } from '../../machine/store-endpoint';
import { DirtyWatch, PgModelStreams, STREAM_CHANNEL, type ModelStreamSource, type StreamChunk, type StreamWatch } from '../../activities/store/model-streams';

export type { ModelStreamSource };

/** With LISTEN: read again this long after the last notification, in case one was lost. */
const LISTEN_FALLBACK_MS = 3_000;
/** Without (the embedded database): how often a running call's stream is read. */
const POLL_MS = 100;

/**
 * The stream source of the workers of this environment (DATABASE_URL, or the embedded database
 * of `home` while a process serves it), or undefined when there is none to read.
 */
export async function openStreamSource(env: NodeJS.ProcessEnv, home: () => string | undefined, o: { listenFallbackMs?: number } = {}): Promise<ModelStreamSource | undefined> {
  const { memoryPool } = await import('../../activities/memory/database');
  if (env.DATABASE_URL) return PgStreamSource.open(memoryPool(env.DATABASE_URL), o.listenFallbackMs ?? LISTEN_FALLBACK_MS);
  const dir = home();
  if (!dir) return undefined;
  const dataDir = embeddedDataDir(dir);
  if (!existsSync(dataDir)) return undefined;
  const { dataDirHolder } = await import('../../activities/memory/lock');
  const holder = await dataDirHolder(dataDir);
  const endpoint = readStoreEndpoint(dataDir);
  if (holder === undefined || endpoint?.pid !== holder) return undefined;
  return PgStreamSource.open(memoryPool(`postgres://postgres@127.0.0.1:${endpoint.port}/postgres`), undefined);
}

/** A stream source over a pool: reads, and a LISTEN connection that wakes the watches of a turn. */
class PgStreamSource implements ModelStreamSource {
  private readonly watches = new Map<string, Set<DirtyWatch>>();
  private listener?: pg.PoolClient;
  private listening = false;
  private closed = false;
  private readonly streams: PgModelStreams;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly fallbackMs: number,
  ) {
    this.streams = new PgModelStreams(pool);
    // An idle connection whose server went away must not crash the reader.
    pool.on('error', () => undefined);
  }

  /** `listenFallbackMs`: listen, and read again this long after a wake anyway; undefined: read on the short timer. */
  static async open(pool: pg.Pool, listenFallbackMs: number | undefined): Promise<PgStreamSource> {
    const source = new PgStreamSource(pool, listenFallbackMs ?? POLL_MS);
    if (listenFallbackMs !== undefined) await source.listen();
    return source;
  }

  /** Listens on its own connection; without it (refused, or lost later) watches read on a timer. */
  private async listen(): Promise<void> {
    try {
      const client = await this.pool.connect();
      const lost = () => {
        if (!this.listening) return;
        this.listening = false;
        client.release(true);
        // Readers waiting for a notification that will not come: read now, then on the timer.
        this.wakeAll();
      };
      client.on('notification', (n) => {
        if (n.channel !== STREAM_CHANNEL) return;
        if (!n.payload) this.wakeAll();
        else for (const w of this.watches.get(n.payload) ?? []) w.wake();
      });
      client.on('error', lost);
      client.on('end', lost);
      await client.query(`LISTEN ${STREAM_CHANNEL}`);
      this.listener = client;
      this.listening = true;
    } catch {
      this.listening = false;
    }
  }

  async read(turnId: string, step: number, callIndex: number, fromSeq: number): Promise<StreamChunk[]> {
    return this.streams.read(turnId, step, callIndex, fromSeq);
  }

  watch(turnId: string): StreamWatch {
    const w = new DirtyWatch(this.listening ? this.fallbackMs : POLL_MS);
    const set = this.watches.get(turnId) ?? new Set();
    set.add(w);
    this.watches.set(turnId, set);
    return {
      // A watch made while listening that lost its listener reads on the short timer from then on.
      changed: (signal) => (this.listening ? w.changed(signal) : new DirtyWatch(POLL_MS).changed(signal)),
      dispose: () => {
        set.delete(w);
        if (!set.size) this.watches.delete(turnId);
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.listening) {
      this.listening = false;
      this.listener?.release(true);
    }
    this.wakeAll();
    await this.pool.end().catch(() => undefined);
  }

  private wakeAll(): void {
    for (const set of this.watches.values()) for (const w of set) w.wake();
  }
}
