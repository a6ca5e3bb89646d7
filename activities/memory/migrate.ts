/**
 * Versioned SQL migrations for the memory store: `migrations/NNN_name.sql` applied in order,
 * each recorded in `schema_migrations`, all inside one transaction under an advisory lock so
 * workers starting together neither race nor half-apply.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { asMemoryError } from './errors';

/** One migration file. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

// Arbitrary but fixed: every worker must contend for the same lock.
const MIGRATION_LOCK_KEY = 0x6d656d30; // "mem0"

/** Finds `migrations/` from source (activities/memory) and from the build (dist/activities/memory). */
export function migrationsDir(start = __dirname): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'migrations');
    if (existsSync(path.join(candidate, '001_memories.sql'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`migrations folder not found above ${start}`);
  }
}

/** Reads the migration files sorted by version; a malformed or duplicate name is a build error. */
export function loadMigrations(dir = migrationsDir()): Migration[] {
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
  try {
    await client.query('BEGIN');
    // Transaction-scoped, so a crashed worker cannot leave it held.
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await client.query(m.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      applied.push(m.version);
    }
    await client.query('COMMIT');
    return applied;
  } catch (err) {
    await client.query('ROLLBACK').catch((e: Error) => (broken = e));
    throw asMemoryError(err);
  } finally {
    // A connection that could not even roll back is discarded rather than reused.
    client.release(broken);
  }
}
