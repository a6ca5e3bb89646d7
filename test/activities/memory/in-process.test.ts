/**
 * The worker's connections to its embedded PGlite, in-process without TCP: the worker's pool
 * uses them, a reader in another process still comes over TCP, and both go through the one
 * queue that keeps other connections' statements out of an open transaction. A transaction a
 * connection left open is rolled back when the database closes; idle in-process connections stay.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../../activities/memory/embedded';
import { Database, memoryPool } from '../../../activities/memory/database';

const dirs: string[] = [];
function newDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pg-inproc-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Where a pooled client's stream goes: 'in-process' for the in-memory pair, an IP for TCP. */
async function peerOf(pool: pg.Pool): Promise<string | undefined> {
  const client = await pool.connect();
  try {
    return (client as unknown as { connection: { stream: { remoteAddress?: string } } }).connection.stream.remoteAddress;
  } finally {
    client.release();
  }
}

describe('in-process connections to the embedded database', () => {
  it("are the worker's: Database's pool talks to its PGlite without TCP, and what it wrote reads back over TCP", async () => {
    const home = newDir();
    const host = new Database({ home });
    try {
      const store = await host.store();
      const pool = (host as unknown as { pool: pg.Pool }).pool;
      expect(await peerOf(pool)).toBe('in-process');
      await store.remember('inproc', null, 'deploys go out on Tuesdays');
      // A reader in another process: TCP to the port the worker serves.
      const embedded = (host as unknown as { embedded: { url: string } }).embedded;
      const reader = memoryPool(embedded.url);
      try {
        expect(await peerOf(reader)).toBe('127.0.0.1');
        const r = await reader.query<{ text: string }>("SELECT text FROM memories WHERE namespace = 'inproc'");
        expect(r.rows.map((x) => x.text)).toEqual(['deploys go out on Tuesdays']);
      } finally {
        await reader.end();
      }
    } finally {
      await host.close();
    }
  });

  it("share the TCP connections' queue: a TCP statement waits for the transaction an in-process connection has open", async () => {
    const db = await startEmbeddedPostgres({ dataDir: path.join(newDir(), 'pgdata') });
    const local = memoryPool(db.url, {}, db.connect);
    const tcp = memoryPool(db.url);
    try {
      await local.query('CREATE TABLE t (id int)');
      const inTx = await local.connect();
      const order: string[] = [];
      try {
        await inTx.query('BEGIN');
        await inTx.query('INSERT INTO t VALUES (1)');
        const counted = tcp.query<{ n: string }>('SELECT count(*) AS n FROM t').then((r) => {
          order.push('tcp read');
          return Number(r.rows[0]!.n);
        });
        await new Promise((resolve) => setTimeout(resolve, 200)); // the read reaches the queue
        await inTx.query('INSERT INTO t VALUES (2)');
        await inTx.query('COMMIT');
        order.push('commit');
        // Run inside the transaction, the read would have come first and counted 1.
        expect(await counted).toBe(2);
        expect(order).toEqual(['commit', 'tcp read']);
      } finally {
        inTx.release();
      }
    } finally {
      await Promise.all([local.end(), tcp.end()]);
      await db.close();
    }
  });

  it('roll back a transaction left open when the database closes, and the folder opens again intact', async () => {
    const dataDir = path.join(newDir(), 'pgdata');
    let db = await startEmbeddedPostgres({ dataDir });
    const local = memoryPool(db.url, {}, db.connect);
    local.on('error', () => undefined); // its connections are closed under it
    await local.query('CREATE TABLE t (id int)');
    await local.query('INSERT INTO t VALUES (1)');
    const open = await local.connect();
    open.on('error', () => undefined); // checked out when its connection is closed under it
    await open.query('BEGIN');
    await open.query('INSERT INTO t VALUES (2)');
    await db.close(); // the worker stops with a transaction under way
    open.release();
    await local.end().catch(() => undefined);
    db = await startEmbeddedPostgres({ dataDir });
    const again = memoryPool(db.url, {}, db.connect);
    try {
      expect((await again.query<{ id: number }>('SELECT id FROM t ORDER BY id')).rows.map((r) => r.id)).toEqual([1]);
    } finally {
      await again.end();
      await db.close();
    }
  });

  it("keep idle connections (a closed one's prepared statements would stay behind in the one backend)", async () => {
    const db = await startEmbeddedPostgres({ dataDir: path.join(newDir(), 'pgdata') });
    const local = memoryPool(db.url, { idleMs: 50 }, db.connect);
    const tcp = memoryPool(db.url, { idleMs: 50 });
    try {
      await local.query('SELECT 1');
      await tcp.query('SELECT 1');
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(local.totalCount).toBe(1);
      expect(tcp.totalCount).toBe(0); // over TCP a dead peer is found by the idle timeout
    } finally {
      await Promise.all([local.end(), tcp.end()]);
      await db.close();
    }
  });
});
