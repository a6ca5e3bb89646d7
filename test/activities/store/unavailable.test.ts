/**
 * The message store when its database is in trouble: a frozen server or network (a proxy that
 * forwards no bytes) gives StoreUnavailableError within the pool's timeouts, saying so in one
 * line; a write that timed out but landed is not stored twice by the retry; the worker's
 * Database hands the store out over the memory database (one embedded PGlite, one lock);
 * and activities report an unavailable store as a retryable STORE_UNAVAILABLE.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { MemoryUnavailableError } from '../../../activities/memory/errors';
import { Database, memoryPool, type MemoryTimeouts } from '../../../activities/memory/database';
import { migrate } from '../../../activities/memory/migrate';
import { asStoreError, STORE_UNAVAILABLE, storeFailure, withStore } from '../../../activities/store/errors';
import { StoreUnavailableError } from '../../../activities/store/message-store';
import { PgMessageStore } from '../../../activities/store/pg-message-store';
import { modelProgress } from '../../../client/model-progress';
import { frozenDatabase } from '../../support/frozen-database';

// Short, so the suite is quick, yet far above what a query takes on a loaded 2-core machine.
const TIMEOUTS: Partial<MemoryTimeouts> = { connectMs: 3_000, queryMs: 3_000, statementMs: 2_500 };
const db = frozenDatabase('msgfreeze');
const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');



function newHome(): string {
  const home = mkdtempSync(path.join(os.tmpdir(), 'msgstore-'));
  db.trackHome(home);
  return home;
}

function host(opts: ConstructorParameters<typeof Database>[0]): Database {
  const h = new Database(opts);
  db.track(h);
  return h;
}

/** A store on a pool configured as a worker's, through the proxy, already holding a connection. */
async function warmStore(): Promise<PgMessageStore> {
  const pool = memoryPool(db.url(), TIMEOUTS);
  db.track(pool);
  await migrate(pool);
  const store = new PgMessageStore(pool);
  await store.getBlobs('warm', ['x']);
  return store;
}

const rows = async (table: string, sessionId: string) =>
  Number((await db.admin.query<{ n: string }>(`SELECT count(*) AS n FROM ${db.schema}.${table} WHERE session_id = $1`, [sessionId])).rows[0]!.n);


describe('the message store against a database that stops answering', () => {
  it('gives StoreUnavailableError saying why in one line instead of hanging, and works again once the database answers', async () => {
    const store = await warmStore();
    const body = { hash: sha('before'), body: 'before' };
    await store.putBlobs('frozen', [body]);
    db.proxy.freeze();
    try {
      const write = await store.putBlobs('frozen', [{ hash: sha('during'), body: 'during' }]).catch((e: unknown) => e);
      expect(write).toBeInstanceOf(StoreUnavailableError);
      expect((write as Error).message).toBe('message store unavailable: no answer from the database in time (query timeout)');
      const read = await store.readChain('frozen', 'a'.repeat(64)).catch((e: unknown) => e);
      expect(read).toBeInstanceOf(StoreUnavailableError);
      expect((read as Error).message).toMatch(/^message store unavailable: [^\n]+$/);
    } finally {
      db.proxy.thaw();
    }
    expect(await store.getBlobs('frozen', [body.hash])).toEqual(new Map([[body.hash, 'before']]));
  }, 60_000);

  it('stores blobs and nodes once when a write timed out, landed after the database resumed, and was retried', async () => {
    const store = await warmStore();
    const blob = { hash: sha('late body'), body: 'late body' };
    const node = { hash: sha(`:${blob.hash}`), parent: null, blob: blob.hash };
    const counts = async () => [await rows('message_blobs', 'late'), await rows('message_nodes', 'late')];
    // Each write goes out on a pooled connection and times out; the pool drops that connection,
    // so the store is used once more before the next freeze (a write needs a connection to leave).
    for (const write of [() => store.putBlobs('late', [blob]), () => store.putNodes('late', [node])]) {
      await store.getBlobs('warm', ['x']);
      db.proxy.freeze();
      try {
        await expect(write()).rejects.toThrow(StoreUnavailableError);
      } finally {
        db.proxy.thaw();
      }
    }
    // The INSERTs were already on their way: they land although the caller was told they failed.
    await expect.poll(counts, { timeout: 30_000, interval: 100 }).toEqual([1, 1]);
    await store.putBlobs('late', [blob]);
    await store.putNodes('late', [node]);
    expect(await counts()).toEqual([1, 1]);
    expect(await store.readChain('late', node.hash)).toEqual([node]);
  }, 60_000);

  it("reports StoreUnavailableError, not MemoryUnavailableError, from the worker's host when the database is frozen before it first connects", async () => {
    const h = host({ home: newHome(), databaseUrl: db.url(), timeouts: TIMEOUTS });
    db.proxy.freeze();
    let err: unknown;
    try {
      err = await h.messages().catch((e: unknown) => e);
    } finally {
      db.proxy.thaw();
    }
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toBe('message store unavailable: no connection to the database in time (connect timeout)');
    // Memory keeps its own wording for the same trouble; the next call opens both.
    const store = await h.messages();
    await store.putBlobs('host', [{ hash: sha('via host'), body: 'via host' }]);
    expect(await rows('message_blobs', 'host')).toBe(1);
  }, 60_000);
});

describe('the message store of the embedded database', () => {
  it('shares one PGlite, its lock and its migrations with long-term memory', async () => {
    const home = newHome();
    const first = host({ home });
    const messages = await first.messages();
    const memory = await first.store(); // a second database here would be refused by the folder lock
    await messages.putBlobs('emb', [{ hash: sha('message body'), body: 'message body' }]);
    await memory.remember('ns', 'emb', 'a long-term note');
    // One database folder, and the note of the port this process serves it on to other readers.
    expect(readdirSync(home).sort()).toEqual(['pgdata', 'pgdata.endpoint']);

    const second = host({ home });
    const refused = await second.messages().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreUnavailableError);
    expect((refused as Error).message).toMatch(/^message store unavailable: the embedded database \S+ is in use by this process \(pid \d+\); only one worker can open it/);
    await expect(second.store()).rejects.toThrow(MemoryUnavailableError);

    await first.close();
    expect(readdirSync(home)).toEqual(['pgdata']); // the note goes with the process that served it
    const third = host({ home });
    expect(await (await third.messages()).getBlobs('emb', [sha('message body')])).toEqual(new Map([[sha('message body'), 'message body']]));
    expect((await (await third.store()).recent('ns', 5)).map((m) => m.text)).toEqual(['a long-term note']);
  }, 60_000);
});

describe('STORE_UNAVAILABLE for activities', () => {
  it('maps StoreUnavailableError to a retryable ApplicationFailure of type STORE_UNAVAILABLE with its first line', async () => {
    const failure = storeFailure(new StoreUnavailableError('message store unavailable: no answer from the database in time (query timeout)\nmore'));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: STORE_UNAVAILABLE, nonRetryable: false, message: 'message store unavailable: no answer from the database in time (query timeout)' });
    const thrown = await withStore(async () => {
      throw new StoreUnavailableError('conversation node abc of session s is missing from the message store');
    }).catch((e: unknown) => e);
    expect(thrown).toMatchObject({ type: STORE_UNAVAILABLE, nonRetryable: false });
  });

  it('leaves other errors as they are: a query bug is not an outage', () => {
    const bug = Object.assign(new Error('syntax error at or near "SELEC"'), { code: '42601' });
    expect(storeFailure(bug)).toBe(bug);
    expect(asStoreError(bug)).toBe(bug);
  });

  it('words a memory-side refusal to open the shared database as the message store, with its reason once', () => {
    const err = asStoreError(new MemoryUnavailableError('memory database unavailable: connect ECONNREFUSED 127.0.0.1:1'));
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toBe('message store unavailable: connect ECONNREFUSED 127.0.0.1:1');
  });

  it('shows a model call waiting on the message store as such in the wait progress', () => {
    const describe = (message: string, type: string) =>
      ({
        raw: {
          pendingActivities: [{ activityType: { name: 'callModel' }, attempt: 2, maximumAttempts: 5, lastFailure: { message, applicationFailureInfo: { type } } }],
        },
      }) as unknown as WorkflowExecutionDescription;
    expect(modelProgress(describe('no answer from the database in time (query timeout)', STORE_UNAVAILABLE))?.lastFailure).toBe(
      'message store unavailable: no answer from the database in time (query timeout)',
    );
    expect(modelProgress(describe('message store unavailable: connect ECONNREFUSED\nstack', STORE_UNAVAILABLE))?.lastFailure).toBe(
      'message store unavailable: connect ECONNREFUSED',
    );
    expect(modelProgress(describe('HTTP 503 from the endpoint', 'MODEL_HTTP_ERROR'))?.lastFailure).toBe('HTTP 503 from the endpoint');
  });
});
