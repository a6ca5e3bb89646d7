/**
 * Versioned SQL migrations for the memory store: `migrations/NNN_name.sql` applied in order,
 * each recorded in `schema_migrations`, all inside one transaction under an advisory lock so
 * workers starting together neither race nor half-apply. An up-to-date schema is recognised
 * without the lock, with the pool's short query timeout; only applying migrations (which can
 * wait on another worker's lock or rebuild an index) gets a longer one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { asMemoryError, isUnavailable } from './errors';

/** One migration file. */
interface Migration {
  version: number;
  name: string;
  sql: string;
}

// Arbitrary but fixed: every worker must contend for the same lock.
const MIGRATION_LOCK_KEY = 0x6d656d30; // "mem0"

// Per statement while applying migrations, client and server side alike.
const MIGRATION_TIMEOUT_MS = 120_000;

/** Finds `migrations/` from source (activities/memory) and from the build (dist/activities/memory). */
export function migrationsDir(start = __dirname): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'migrations');
    if (existsSync(path.join(candidate, '001_memories.sql'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`migrations folder not found above ${start}`);
  }
}

/** Reads the migration files sorted by version; a malformed or duplicate name is a build error. */
function loadMigrations(dir = migrationsDir()): Migration[] {
  const out: Migration[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sql'))) {
    const m = /^(\d+)_([\w-]+)\.sql$/.exec(file);
    if (!m) throw new Error(`migration file name must be NNN_name.sql: ${file}`);
    const version = Number(m[1]);
    if (out.some((x) => x.version === version)) throw new Error(`duplicate migration version ${version}: ${file}`);
    out.push({ version, name: m[2]!, sql: readFileSync(path.join(dir, file), 'utf8') });
  }
  return out.sort((a, b) => a.version - b.version);
}

/** Applies pending migrations; returns the versions applied now (empty when up to date). */
export async function migrate(pool: pg.Pool, migrations: Migration[] = loadMigrations()): Promise<number[]> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw asMemoryError(err);
  }
  const applied: number[] = [];
  let broken: Error | undefined;
  let inTransaction = false;
  // pg honours query_timeout in a query config; its typings do not list it.
  const slow = <R extends pg.QueryResultRow>(text: string, values: unknown[] = []) =>
    client.query<R>({ text, values, query_timeout: MIGRATION_TIMEOUT_MS } as pg.QueryConfig);
  try {
    // Every worker start lands here: an up-to-date schema must not wait on the migration lock.
    // Looked up in the schema CREATE TABLE would use (the first of search_path), not anywhere
    // on the path: a `public.schema_migrations` must not pass for a private schema's.
    const table = await client.query<{ exists: boolean }>("SELECT to_regclass(format('%I.schema_migrations', current_schema())) IS NOT NULL AS exists");
    if (table.rows[0]?.exists) {
      const present = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
      if (migrations.every((m) => present.has(m.version))) return applied;
    }
    await client.query('BEGIN');
    inTransaction = true;
    await client.query(`SET LOCAL statement_timeout = ${MIGRATION_TIMEOUT_MS}`);
    // Transaction-scoped, so a crashed worker cannot leave it held.
    await slow('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await slow(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    await slow('COMMIT');
    return applied;
  } catch (err) {
    // A timed-out or broken connection is discarded unrolled-back: the server aborts its transaction.
    if (isUnavailable(err)) broken = err as Error;
    else if (inTransaction) await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    throw asMemoryError(err);
  } finally {
    // A connection that could not even roll back is discarded rather than reused.
    client.release(broken);
  }
}
