/**
 * A database that stops answering (a frozen server or network, simulated by a proxy that
 * forwards no bytes) gives MEMORY_UNAVAILABLE within the configured timeouts instead of
 * hanging the tool call, memory works again once it answers, and a write that timed out but
 * landed later is not stored a second time by the retry.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { asMemoryError, MemoryUnavailableError } from '../../../activities/memory/errors';
import { Database, memoryPool, type MemoryTimeouts } from '../../../activities/memory/database';
import { MemoryStore } from '../../../activities/memory/store';
import { recall, rememberLongterm } from '../../../activities/memory/tools';
import { createToolExecutor } from '../../../activities/tools/executor';
import { frozenDatabase } from '../../support/frozen-database';
import { TEST_DATABASE_URL } from './backends';

// Short, so the suite is quick, yet far above what a query takes on a loaded 2-core machine.
const TIMEOUTS: Partial<MemoryTimeouts> = { connectMs: 3_000, queryMs: 3_000, statementMs: 2_500 };
const db = frozenDatabase('memfreeze');



/** A store on a pool configured as a worker's, through the proxy, already holding a connection. */
async function warmStore(): Promise<MemoryStore> {
  const pool = memoryPool(db.url(), TIMEOUTS);
  db.track(pool);
  const store = new MemoryStore(pool);
  await store.migrate();
  await store.recent('warm', 1);
  return store;
}

const rowsWithKey = async (key: string) =>
  (await db.admin.query<{ id: string }>(`SELECT id FROM ${db.schema}.memories WHERE request_key = $1`, [key])).rows.map((r) => Number(r.id));


describe('memory against a database that stops answering', () => {
  it('gives MEMORY_UNAVAILABLE for a pooled connection instead of hanging, and works again once the database answers', async () => {
    const store = await warmStore();
    await store.remember('freeze', 's1', 'The staging cluster is in Frankfurt');
    db.proxy.freeze();
    try {
      const saved = await rememberLongterm(store, { namespace: 'freeze', sessionId: 's1' }, { text: 'Written while frozen' });
      expect(saved).toMatchObject({
        ok: false,
        error_type: 'MEMORY_UNAVAILABLE',
        recoverable: true,
        message: 'memory database unavailable: no answer from the database in time (query timeout)',
      });
      const found = await recall(store, { namespace: 'freeze' }, { query: 'staging cluster' });
      expect(found).toMatchObject({ ok: false, error_type: 'MEMORY_UNAVAILABLE' });
      expect(found.message).toMatch(/^memory database unavailable: [^\n]+$/);
    } finally {
      db.proxy.thaw();
    }
    // The timed-out connections were discarded: a late answer cannot reach a later query.
    const after = await recall(store, { namespace: 'freeze' }, { query: 'staging cluster' });
    expect(after).toMatchObject({ ok: true, result: { memories: [expect.objectContaining({ text: 'The staging cluster is in Frankfurt' })] } });
  }, 60_000);

  it('stores a write once when it timed out, landed after the database resumed, and was retried with the same call key', async () => {
    const store = await warmStore();
    const scope = { namespace: 'late', sessionId: 's2', requestKey: 's2/turn-1/call_1' };
    db.proxy.freeze();
    let failed;
    try {
      failed = await rememberLongterm(store, scope, { text: 'Use blue-green deploys' });
    } finally {
      db.proxy.thaw();
    }
    expect(failed).toMatchObject({ ok: false, error_type: 'MEMORY_UNAVAILABLE' });
    // The INSERT was already on its way: it lands although the caller was told it failed.
    await expect.poll(() => rowsWithKey(scope.requestKey), { timeout: 30_000, interval: 100 }).toHaveLength(1);
    const [landed] = await rowsWithKey(scope.requestKey);

    const retried = await rememberLongterm(store, scope, { text: 'Use blue-green deploys' });
    expect(retried).toEqual({ ok: true, result: { id: landed, stored: true } });
    expect(await rowsWithKey(scope.requestKey)).toEqual([landed]);
  }, 60_000);

  it('reports MEMORY_UNAVAILABLE from the executor when the database is frozen before the worker first connects, prefix once', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'memfreeze-'));
    db.trackHome(home);
    const host = new Database({ home, databaseUrl: db.url(), timeouts: TIMEOUTS });
    db.track(host);
    const executor = createToolExecutor({ home, memory: () => host.store() });
    const call = { sessionId: 'freeze-s3', name: 'remember_longterm', args: { text: 'Frozen at start' }, turnId: 'freeze-s3/turn-1', callId: 'call_1' };
    db.proxy.freeze();
    let r;
    try {
      r = await executor.execute(call);
    } finally {
      db.proxy.thaw();
    }
    expect(r).toMatchObject({ ok: false, error_type: 'MEMORY_UNAVAILABLE', message: 'memory database unavailable: no connection to the database in time (connect timeout)' });
    // The next call opens the store and the same call key is stored once.
    const first = await executor.execute(call);
    const again = await executor.execute(call);
    expect(first).toMatchObject({ ok: true, result: { stored: true } });
    expect(again).toEqual(first);
    expect(await rowsWithKey('freeze-s3/turn-1/call_1')).toHaveLength(1);
  }, 60_000);

  it('treats a statement the server cancels for its statement_timeout as unavailability and keeps the connection usable', async () => {
    const pool = memoryPool(TEST_DATABASE_URL, { statementMs: 200 });
    db.track(pool);
    const err = await pool.query('SELECT pg_sleep(5)').catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('57014');
    expect(asMemoryError(err)).toBeInstanceOf(MemoryUnavailableError);
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  }, 60_000);
});
