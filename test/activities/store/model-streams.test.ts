/**
 * Streamed model text in the database (migration 006) on both databases the harness runs on:
 * pieces numbered on across a call's attempts, a place taken refused, read back in order from
 * any piece, swept by age, purged with the session. Then the readers' side (stream-source.ts):
 * on Postgres a reader with DATABASE_URL sleeps until the writer's NOTIFY wakes it (its fallback
 * read is set past the test's timeout); on the embedded database, served by the process holding
 * it, a reader of that HARNESS_HOME reads it too; without either there is no source.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../activities/memory/migrate';
import { Database } from '../../../activities/memory/database';
import { startEmbeddedPostgres } from '../../../activities/memory/embedded';
import { PgModelStreams, type StreamCall } from '../../../activities/store/model-streams';
import { openStreamSource } from '../../../client/watch/stream-source';
import { embeddedDataDir } from '../../../machine/paths';
import { embeddedPostgres, realPostgres, TEST_DATABASE_URL, type Backend } from '../memory/backends';

const callOf = (turnId: string, attempt = 1): StreamCall => ({ sessionId: turnId.split('/')[0]!, turnId, step: 1, callIndex: 0, attempt });

describe.each([
  ['real Postgres', realPostgres],
  ['embedded PGlite', embeddedPostgres],
])('streamed text on %s', (_name, open) => {
  let backend: Backend;
  let pool: pg.Pool;
  let streams: PgModelStreams;

  beforeAll(async () => {
    backend = await open();
    pool = backend.pool();
    await migrate(pool);
    streams = new PgModelStreams(pool);
  });
  afterAll(async () => backend?.teardown());

  it('numbers pieces on across attempts, refuses a place taken, reads from any piece', async () => {
    const turn = `s-${randomUUID().slice(0, 8)}/turn-1`;
    expect(await streams.append(callOf(turn), 'Hel', undefined)).toBe(0);
    expect(await streams.append(callOf(turn), 'lo\u0000 wörld', 1)).toBe(1);
    expect(await streams.append(callOf(turn), 'taken', 1)).toBeUndefined();
    // A request sent again goes on after the last piece, under its own attempt.
    expect(await streams.append(callOf(turn, 2), 'Again', undefined)).toBe(2);
    const all = await streams.read(turn, 1, 0, 0);
    expect(all.map((c) => [c.seq, c.attempt, c.text])).toEqual([
      [0, 1, 'Hel'],
      [1, 1, 'lo\u0000 wörld'],
      [2, 2, 'Again'],
    ]);
    expect(Date.parse(all[0]!.at)).not.toBeNaN();
    expect((await streams.read(turn, 1, 0, 2)).map((c) => c.text)).toEqual(['Again']);
    expect(await streams.read(turn, 2, 0, 0)).toEqual([]);
  });

  it('sweeps by age and purges a session without touching another', async () => {
    const [a, b] = [`a-${randomUUID().slice(0, 8)}/turn-1`, `b-${randomUUID().slice(0, 8)}/turn-1`];
    await streams.append(callOf(a), 'old', undefined);
    await streams.append(callOf(b), 'kept', undefined);
    await pool.query(`UPDATE model_stream_chunks SET at = now() - interval '7 hours' WHERE turn_id = $1`, [a]);
    expect(await streams.sweep(6 * 3600_000)).toBeGreaterThanOrEqual(1);
    expect(await streams.read(a, 1, 0, 0)).toEqual([]);
    expect((await streams.read(b, 1, 0, 0)).map((c) => c.text)).toEqual(['kept']);
    expect(await streams.purge(callOf(b).sessionId)).toBe(1);
    expect(await streams.read(b, 1, 0, 0)).toEqual([]);
  });
});

describe('readers of streamed text', () => {
  let db: Database;

  beforeAll(async () => {
    // The shared test database, migrated as a worker migrates it.
    db = new Database({ home: mkdtempSync(path.join(os.tmpdir(), 'harness-streams-')), databaseUrl: TEST_DATABASE_URL });
    await db.messages();
  });
  afterAll(async () => db?.close());

  it('with DATABASE_URL a reader sleeps until the NOTIFY of a write to its turn wakes it', async () => {
    // No fallback read within the test: only the notification can wake the reader.
    const source = (await openStreamSource({ DATABASE_URL: TEST_DATABASE_URL }, () => undefined, { listenFallbackMs: 600_000 }))!;
    const writer = (await db.messages()).modelStreams!();
    const turn = `n-${randomUUID().slice(0, 8)}/turn-1`;
    const other = `o-${randomUUID().slice(0, 8)}/turn-1`;
    try {
      const watch = source.watch(turn);
      let woke = false;
      const waiting = watch.changed().then(() => (woke = true));
      // A write to another turn does not wake this reader.
      await writer.append(callOf(other), 'elsewhere', undefined);
      await new Promise((r) => setTimeout(r, 300));
      expect(woke).toBe(false);
      await writer.append(callOf(turn), 'here', undefined);
      await waiting;
      expect((await source.read(turn, 1, 0, 0)).map((c) => c.text)).toEqual(['here']);
      watch.dispose();
    } finally {
      await source.close();
    }
  });

  it("without DATABASE_URL a reader reads the embedded database of its HARNESS_HOME through the process serving it, and none without one", async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'harness-streams-embedded-'));
    expect(await openStreamSource({}, () => home)).toBeUndefined(); // no database there yet
    expect(await openStreamSource({}, () => undefined)).toBeUndefined();
    const served = await startEmbeddedPostgres({ dataDir: embeddedDataDir(home) });
    const local = new Database({ home: mkdtempSync(path.join(os.tmpdir(), 'harness-streams-pool-')), databaseUrl: served.url });
    try {
      const writer = (await local.messages()).modelStreams!();
      const turn = `e-${randomUUID().slice(0, 8)}/turn-1`;
      await writer.append(callOf(turn), 'on the worker machine', undefined);
      const source = (await openStreamSource({}, () => home))!;
      try {
        expect((await source.read(turn, 1, 0, 0)).map((c) => c.text)).toEqual(['on the worker machine']);
        const watch = source.watch(turn);
        await watch.changed(); // reads on a short timer there: it resolves without a notification
        watch.dispose();
      } finally {
        await source.close();
      }
    } finally {
      await local.close();
      await served.close();
    }
  });
});
