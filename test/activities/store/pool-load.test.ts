/**
 * The worker's pool under load: a hundred store calls at once (as many as a worker's activity
 * slots) through the worker's own Database, with its own timeouts, on real Postgres and on the
 * embedded PGlite, all answer: none waits in the pool's queue past its connection timeout and
 * fails as STORE_UNAVAILABLE. And the pool's size: a default, HARNESS_DB_POOL_MAX, a bad value
 * refused in one line.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Database, DEFAULT_POOL_MAX, memoryPool, poolMaxFromEnv } from '../../../activities/memory/database';
import { asStoreError, withStore } from '../../../activities/store/errors';
import { TEST_DATABASE_URL } from '../memory/backends';

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const CALLS = 100;

const homes: string[] = [];
const databases: Database[] = [];
afterAll(async () => {
  await Promise.all(databases.map((d) => d.close()));
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

function database(url?: string): Database {
  const home = mkdtempSync(path.join(os.tmpdir(), 'pool-load-'));
  homes.push(home);
  const d = Database.fromEnv(home, url ? { DATABASE_URL: url } : {});
  databases.push(d);
  return d;
}

describe.each([
  ['real Postgres', () => database(TEST_DATABASE_URL)],
  ['embedded PGlite', () => database()],
])('a hundred concurrent store calls on %s', (_name, open) => {
  it('all answer, none as STORE_UNAVAILABLE', async () => {
    const db = open();
    const store = await db.messages();
    const session = `pool-load-${process.pid}-${Date.now()}`;
    // Each call writes a step as a model call does (a 4 KiB body and its node), then reads its chain back.
    const outcomes = await Promise.allSettled(
      Array.from({ length: CALLS }, (_, i) =>
        withStore(async () => {
          const body = `${i}:${'x'.repeat(4 * 1024)}`;
          const blob = sha(body);
          const node = sha(`:${blob}`);
          await store.putChain(session, [{ hash: blob, body }], [{ hash: node, parent: null, blob }]);
          const chain = await store.readChain(session, node);
          const bodies = await store.getBlobs(session, [blob]);
          return chain.length === 1 && bodies.get(blob) === body;
        }),
      ),
    );
    const failed = outcomes.flatMap((o) => (o.status === 'rejected' ? [String((o.reason as Error)?.message ?? o.reason)] : []));
    expect(failed).toEqual([]);
    expect(outcomes.every((o) => o.status === 'fulfilled' && o.value)).toBe(true);
    await store.purge(session);
  });
});

describe('a hundred concurrent statements on a slow real Postgres', () => {
  it('all answer within the worker\'s timeouts, none as STORE_UNAVAILABLE', async () => {
    // Each statement holds its connection a quarter of a second, as under a loaded server: with
    // 4 connections the last calls waited in the pool's queue past its 5 s and failed.
    const pool = memoryPool(TEST_DATABASE_URL, {}, undefined, poolMaxFromEnv({}));
    try {
      const outcomes = await Promise.allSettled(
        Array.from({ length: CALLS }, () =>
          withStore(async () => {
            try {
              return (await pool.query<{ ok: number }>('SELECT 1 AS ok FROM pg_sleep(0.25)')).rows[0]?.ok;
            } catch (err) {
              throw asStoreError(err);
            }
          }),
        ),
      );
      const failed = outcomes.flatMap((o) => (o.status === 'rejected' ? [String((o.reason as Error)?.message ?? o.reason)] : []));
      expect(failed).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});

describe('the pool size', () => {
  it('has a default, follows HARNESS_DB_POOL_MAX, and refuses a bad value in one line', () => {
    expect(poolMaxFromEnv({})).toBe(DEFAULT_POOL_MAX);
    expect(DEFAULT_POOL_MAX).toBeGreaterThanOrEqual(20);
    expect(poolMaxFromEnv({ HARNESS_DB_POOL_MAX: '64' })).toBe(64);
    expect(Database.fromEnv('/nowhere', { HARNESS_DB_POOL_MAX: '64' }).poolMax).toBe(64);
    for (const bad of ['0', 'lots', '2.5']) {
      expect(() => poolMaxFromEnv({ HARNESS_DB_POOL_MAX: bad })).toThrow(/^HARNESS_DB_POOL_MAX is "[^"]+": give a whole number from 1 to \d+ \(default \d+\)$/);
    }
  });
});
