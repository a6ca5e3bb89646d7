/**
 * The two databases the memory tests run against with the same code: the real Postgres
 * (DATABASE_URL or the local test server, in a throwaway schema) and the embedded PGlite (in a
 * throwaway data dir), connected in-process as its worker connects (other processes come over
 * TCP: in-process.test.ts). A missing server fails the tests, never skips.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../../activities/memory/embedded';

/** The real server the tests use. */
export const TEST_DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A database the suite can open pools on, restart (for persistence), and tear down. */
export interface Backend {
  name: string;
  pool(): pg.Pool;
  /** Simulates a new worker process: for PGlite, closes and reopens the data dir. */
  restart(): Promise<void>;
  teardown(): Promise<void>;
}

/** Real Postgres, isolated in a fresh schema so others' data is never touched. */
export async function realPostgres(): Promise<Backend> {
  const schema = `memtest_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await admin.connect();
  // In public, not in the throwaway schema: dropping that schema must not drop the extension.
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await admin.query(`CREATE SCHEMA ${schema}`);
  const pools: pg.Pool[] = [];
  return {
    name: 'real Postgres',
    pool() {
      const p = new pg.Pool({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${schema},public`, max: 4 });
      pools.push(p);
      return p;
    },
    async restart() {
      await Promise.all(pools.splice(0).map((p) => p.end()));
    },
    async teardown() {
      await Promise.all(pools.splice(0).map((p) => p.end()));
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

/** The embedded default: PGlite over the wire protocol, from the process that runs it. */
export async function embeddedPostgres(): Promise<Backend> {
  const dataDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'memtest-pglite-')), 'pgdata');
  let server: EmbeddedPostgres = await startEmbeddedPostgres({ dataDir });
  const pools: pg.Pool[] = [];
  const endPools = () => Promise.all(pools.splice(0).map((p) => p.end()));
  return {
    name: 'embedded PGlite',
    pool() {
      const p = new pg.Pool({ connectionString: server.url, max: 4, stream: () => server.connect() });
      pools.push(p);
      return p;
    },
    async restart() {
      await endPools();
      await server.close();
      server = await startEmbeddedPostgres({ dataDir });
    },
    async teardown() {
      await endPools();
      await server.close();
      rmSync(path.dirname(dataDir), { recursive: true, force: true });
    },
  };
}

/** A pool pointing at a port nothing listens on: the database is "down". */
export function deadPool(): pg.Pool {
  // Port 1 is reserved (tcpmux) and closed on any test machine; the timeout bounds a firewall drop.
  return new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/test', connectionTimeoutMillis: 2_000 });
}
