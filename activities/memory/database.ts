/**
 * Where long-term memory lives for a worker: DATABASE_URL when set, otherwise the embedded
 * PGlite under HARNESS_HOME/pgdata, served over the Postgres wire protocol so the same `pg`
 * code runs. Opened on first use (a worker that never remembers starts no database) and
 * migrated once. PGlite allows one process per data folder, so the folder is locked while
 * open: a second opener gets MEMORY_UNAVAILABLE naming the holder, except a worker, which opens
 * it before polling and waits for the holder (open(waitForLock)); set DATABASE_URL to share
 * memory between workers. The message store (activities/store) lives
 * in the same database: messages() hands it out over the same pool.
 */
import pg from 'pg';
import type { Duplex } from 'node:stream';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded';
import { embeddedDataDir } from '../../machine/paths';
import { MemoryUnavailableError, UNAVAILABLE_PREFIX } from './errors';
import type { LockMethod, LockWait } from './lock';
import { MemoryStore } from './store';
import { asStoreError } from '../store/errors';
import type { MessageStore } from '../store/message-store';
import { PgMessageStore } from '../store/pg-message-store';

/** How long memory waits on the database before reporting MEMORY_UNAVAILABLE (milliseconds). */
export interface MemoryTimeouts {
  /** TCP connect plus the startup handshake. */
  connectMs: number;
  /** Client side, per query: a frozen server or network answers nothing, and this gives up on it. */
  queryMs: number;
  /** Server side, per statement: a slow or lock-blocked statement is cancelled cleanly (not applied by PGlite). */
  statementMs: number;
  /** A pooled connection unused this long is closed, so a dead peer is not found by a query first. */
  idleMs: number;
}

/** The timeouts of a worker: a database that stops answering is MEMORY_UNAVAILABLE within seconds. */
const DEFAULT_MEMORY_TIMEOUTS: MemoryTimeouts = { connectMs: 5_000, queryMs: 10_000, statementMs: 8_000, idleMs: 30_000 };

/**
 * Connections a worker's pool opens at most (HARNESS_DB_POOL_MAX). A store call holds one for a
 * statement of a millisecond or so, and a call that finds them all busy waits in the pool's queue
 * within connectMs: with 4, a hundred activities writing at once queued past it and failed as
 * STORE_UNAVAILABLE. 20 keeps a hundred concurrent calls well inside it, and Postgres' default
 * of 100 connections still serves four workers; raise it with the worker's activity slots.
 */
export const DEFAULT_POOL_MAX = 20;
const MAX_POOL_MAX = 1_000;

/** The pool size the environment sets (HARNESS_DB_POOL_MAX), or the default; a bad value is refused in one line. */
export function poolMaxFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.HARNESS_DB_POOL_MAX?.trim();
  if (!raw) return DEFAULT_POOL_MAX;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_POOL_MAX) {
    throw new Error(`HARNESS_DB_POOL_MAX is ${JSON.stringify(raw)}: give a whole number from 1 to ${MAX_POOL_MAX} (default ${DEFAULT_POOL_MAX})`);
  }
  return n;
}

/**
 * A pool whose every connection and query is bounded in time. `stream` opens a connection
 * without TCP (the embedded database's own process: EmbeddedPostgres.connect).
 */
export function memoryPool(url: string, timeouts: Partial<MemoryTimeouts> = {}, stream?: () => Duplex, max: number = DEFAULT_POOL_MAX): pg.Pool {
  const t = { ...DEFAULT_MEMORY_TIMEOUTS, ...timeouts };
  return new pg.Pool({
    connectionString: url,
    ...(stream ? { stream } : {}),
    max,
    connectionTimeoutMillis: t.connectMs,
    // Without it a frozen server hangs a query for as long as TCP keeps the connection (minutes).
    // pg fails the query and pool.query then discards the connection; transactions do the same.
    query_timeout: t.queryMs,
    // Shorter than query_timeout so a merely slow server cancels the statement itself and the
    // connection stays usable; a frozen one never gets there and the client timeout fires.
    statement_timeout: t.statementMs,
    // A worker that dies inside a transaction must not hold its locks until TCP notices.
    idle_in_transaction_session_timeout: Math.max(t.queryMs * 3, 30_000),
    // In-process connections have no peer to lose, and a closed one would leave its prepared
    // statements behind in PGlite's one backend: they are kept (0: never closed for idleness).
    idleTimeoutMillis: stream ? 0 : t.idleMs,
    keepAlive: true,
  });
}

/** Opens long-term memory on first use and keeps it for the worker's lifetime. */
export class Database {
  private opening?: Promise<{ memory: MemoryStore; messages: PgMessageStore }>;
  private embedded?: EmbeddedPostgres;
  private pool?: pg.Pool;

  /** `poolMax`: connections at most (default DEFAULT_POOL_MAX). */
  constructor(private readonly opts: { home: string; databaseUrl?: string; timeouts?: Partial<MemoryTimeouts>; lockMethod?: LockMethod; poolMax?: number }) {}

  /** The memory of a process with this home and environment: DATABASE_URL when set, else the embedded database under `home`; HARNESS_DB_POOL_MAX sizes its pool. */
  static fromEnv(home: string, env: NodeJS.ProcessEnv): Database {
    return new Database({ home, poolMax: poolMaxFromEnv(env), ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}) });
  }

  /** Connections the pool opens at most. */
  get poolMax(): number {
    return this.opts.poolMax ?? DEFAULT_POOL_MAX;
  }

  /** The store, connected and migrated; rejects with MemoryUnavailableError when the database is down or in use. */
  async store(): Promise<MemoryStore> {
    return (await this.connect()).memory;
  }

  /**
   * The message store, in the same database (same pool, embedded PGlite, lock and migrations);
   * rejects with StoreUnavailableError, saying why, when the database is down or in use.
   */
  async messages(): Promise<MessageStore> {
    try {
      return (await this.connect()).messages;
    } catch (err) {
      throw asStoreError(err);
    }
  }

  /**
   * Opens the database now. With `waitForLock`, an embedded folder another process holds is
   * waited for instead of refused: a worker opens its database so before it polls (workers/main.ts).
   */
  async open(waitForLock?: LockWait): Promise<void> {
    await this.connect(waitForLock);
  }

  private connect(waitForLock?: LockWait): Promise<{ memory: MemoryStore; messages: PgMessageStore }> {
    this.opening ??= this.openNow(waitForLock).catch((err) => {
      this.opening = undefined; // try again on the next call: the database may come back, the holder may exit
      throw err;
    });
    return this.opening;
  }

  private async openNow(waitForLock?: LockWait): Promise<{ memory: MemoryStore; messages: PgMessageStore }> {
    let url = this.opts.databaseUrl;
    let stream: (() => Duplex) | undefined;
    if (!url) {
      this.embedded ??= await this.startEmbedded(waitForLock);
      url = this.embedded.url;
      stream = this.embedded.connect; // this process runs it: no TCP
    }
    const pool = memoryPool(url, this.opts.timeouts, stream, this.poolMax);
    const store = new MemoryStore(pool);
    try {
      await store.migrate();
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    this.pool = pool;
    return { memory: store, messages: new PgMessageStore(pool) };
  }

  private async startEmbedded(waitForLock?: LockWait): Promise<EmbeddedPostgres> {
    const dataDir = embeddedDataDir(this.opts.home);
    try {
      return await startEmbeddedPostgres({ dataDir, ...(this.opts.lockMethod ? { lockMethod: this.opts.lockMethod } : {}), ...(waitForLock ? { waitForLock } : {}) });
    } catch (err) {
      if (err instanceof MemoryUnavailableError || waitForLock?.signal?.aborted) throw err;
      // PGlite reports a damaged folder as a bare WASM abort: say which folder.
      const detail = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      throw new MemoryUnavailableError(`${UNAVAILABLE_PREFIX}the embedded database ${dataDir} cannot be opened (${detail.split('\n')[0]})`, { cause: err });
    }
  }

  /** Ends the pool and closes the embedded database, which frees its folder for another worker. */
  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    await opening?.catch(() => undefined);
    await this.pool?.end().catch(() => undefined);
    this.pool = undefined;
    await this.embedded?.close();
    this.embedded = undefined;
  }
}
