/**
 * The embedded memory database used when DATABASE_URL is unset: PGlite (Postgres compiled to
 * WASM) with its data under `<HARNESS_HOME>/pgdata`, served over the Postgres wire protocol
 * so the MemoryStore runs the very same `pg` code as against a real server. The data folder
 * is locked for as long as it is open: a second opener would corrupt it (see lock.ts).
 */
import { mkdirSync } from 'node:fs';
import { PGlite, type Extension } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { Duplex } from 'node:stream';
import { InProcessConnections } from './in-process';
import { lockDataDir, waitForDataDirLock, type LockMethod, type LockWait } from './lock';
import { registerOwnPort } from '../tools/own-ports';
import { writeStoreEndpoint } from '../../machine/store-endpoint';

// A subpath export: moduleResolution node10 cannot type it, Node's require resolves it.
const { pg_trgm } = require('@electric-sql/pglite/contrib/pg_trgm') as { pg_trgm: Extension };

/** A running embedded server. */
export interface EmbeddedPostgres {
  /** Connection string for `pg` (user postgres, database postgres, no password). */
  url: string;
  port: number;
  /**
   * A new connection from this process without TCP (in-process.ts), as `pg`'s `stream` option:
   * this process's pool uses it, other processes connect to `url`.
   */
  connect(): Duplex;
  /** Stops accepting connections, closes the database (flushes it to disk), then frees the folder's lock. */
  close(): Promise<void>;
}

// Where the embedded data lives: machine/paths.ts, so readers (the trace) need not load PGlite to find it.

/**
 * Locks dataDir, starts PGlite on it and listens on 127.0.0.1 (a free port unless one is given).
 * Rejects with MemoryUnavailableError naming the holder when another opener has the folder,
 * or, given `waitForLock`, waits until the holder has let go.
 * PGlite is one single-user backend: the socket server queues queries from all
 * connections and keeps a transaction on its connection until it ends, so a small pool works.
 */
export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port?: number;
  maxConnections?: number;
  lockMethod?: LockMethod;
  waitForLock?: LockWait;
}): Promise<EmbeddedPostgres> {
  mkdirSync(opts.dataDir, { recursive: true });
  // Before PGlite touches the folder: even opening it read-only while another instance writes is unsafe.
  const lock = opts.waitForLock ? await waitForDataDirLock(opts.dataDir, opts.lockMethod, opts.waitForLock) : await lockDataDir(opts.dataDir, opts.lockMethod);
  const db = await PGlite.create(opts.dataDir, { extensions: { pg_trgm } }).catch(async (err: unknown) => {
    await lock.release();
    throw err;
  });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: opts.port ?? 0, maxConnections: opts.maxConnections ?? 16 });
  try {
    await server.start();
  } catch (err) {
    await db.close().catch(() => undefined);
    await lock.release();
    throw err;
  }
  const local = new InProcessConnections(server);
  const port = Number(server.getServerConn().split(':').pop());
  // The worker's own: http_request never reaches it, whatever a session allows.
  const forget = registerOwnPort(port, 'memory database (embedded PGlite)');
  // Readers in other processes (trace --full, the console, the OTLP export) find it there.
  const unnote = writeStoreEndpoint(opts.dataDir, port);
  let closed = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    connect: local.open,
    async close() {
      if (closed) return;
      closed = true;
      try {
        unnote();
        await local.close();
        await server.stop();
        forget();
        await db.close();
      } finally {
        // Only once the database is flushed and closed may another process open the folder.
        await lock.release();
      }
    },
  };
}
