/**
 * The Postgres message store on both databases the harness runs on (a real server in a
 * throwaway schema, the embedded PGlite over the wire protocol): idempotent batched writes,
 * chains read root first in one query, broken chains named, multi-megabyte bodies, purge of
 * exactly one session, idle sessions.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../activities/memory/migrate';
import { StoreUnavailableError, type StoredNode } from '../../../activities/store/message-store';
import { PgMessageStore } from '../../../activities/store/pg-message-store';
import { embeddedPostgres, realPostgres, type Backend } from '../memory/backends';

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** A chain of messages as Conversations builds one: each node hashes its parent and its body's hash. */
function chain(texts: string[], parent: string | null = null): { blobs: { hash: string; body: string }[]; nodes: StoredNode[] } {
  const blobs = texts.map((body) => ({ hash: sha(body), body }));
  const nodes: StoredNode[] = [];
  for (const b of blobs) {
    const hash = sha(`${parent ?? ''}:${b.hash}`);
    nodes.push({ hash, parent, blob: b.hash });
    parent = hash;
  }
  return { blobs, nodes };
}

describe.each([
  ['real Postgres', realPostgres],
  ['embedded PGlite', embeddedPostgres],
])('the Postgres message store on %s', (_name, open) => {
  let backend: Backend;
  let pool: pg.Pool;
  let store: PgMessageStore;

  const count = async (table: string, sessionId: string) =>
    Number((await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE session_id = $1`, [sessionId])).rows[0]!.n);

  beforeAll(async () => {
    backend = await open();
    pool = backend.pool();
    await migrate(pool);
    store = new PgMessageStore(pool);
  });
  afterAll(async () => backend?.teardown());

  it('stores the same blobs and nodes written twice, or twice in one batch, as one row each', async () => {
    const { blobs, nodes } = chain(['{"role":"user","content":"hi"}', '{"role":"assistant","content":"hello"}']);
    await store.putBlobs('idem', [...blobs, blobs[0]!]);
    await store.putBlobs('idem', blobs);
    await store.putNodes('idem', [...nodes, nodes[1]!]);
    await store.putNodes('idem', nodes);
    expect(await count('message_blobs', 'idem')).toBe(2);
    expect(await count('message_nodes', 'idem')).toBe(2);
    // A stored hash is left as it is: the first body wins.
    await store.putBlobs('idem', [{ hash: blobs[0]!.hash, body: 'something else' }]);
    expect((await store.getBlobs('idem', [blobs[0]!.hash])).get(blobs[0]!.hash)).toBe(blobs[0]!.body);
  });

  it('serves many writes and reads at once over every connection of the pool (its statements prepared on each)', async () => {
    // PGlite serves all connections from one backend, where prepared statements' names are shared.
    const sessions = Array.from({ length: 12 }, (_, i) => `many-${i}`);
    const chains = sessions.map((s) => chain([`${s} one`, `${s} two`]));
    for (let round = 0; round < 3; round++) {
      await Promise.all(sessions.map((s, i) => store.putChain(s, chains[i]!.blobs, chains[i]!.nodes)));
      const read = await Promise.all(sessions.map((s, i) => store.readChain(s, chains[i]!.nodes[1]!.hash)));
      expect(read).toEqual(chains.map((c) => c.nodes));
      const bodies = await Promise.all(sessions.map((s, i) => store.getBlobs(s, [chains[i]!.blobs[0]!.hash])));
      expect(bodies.map((b) => [...b.values()])).toEqual(sessions.map((s) => [`${s} one`]));
    }
  });

  it("serves a second store on the same database (a reader in another process) beside the worker's, and the reader leaves no prepared statement behind", async () => {
    // On PGlite every process's connections share one backend and its statement names: the
    // worker's store and a reader's both number their first connection 0.
    const { blobs, nodes } = chain(['reader one', 'reader two']);
    await store.putChain('two-stores', blobs, nodes);
    expect(await store.readChain('two-stores', nodes[1]!.hash)).toEqual(nodes);
    const prepared = async () => Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM pg_prepared_statements')).rows[0]!.n);
    const readerPool = backend.pool();
    const before = await prepared();
    const reader = new PgMessageStore(readerPool, { prepare: false });
    expect(await reader.readChain('two-stores', nodes[1]!.hash)).toEqual(nodes);
    expect([...(await reader.getBlobs('two-stores', [blobs[0]!.hash])).values()]).toEqual(['reader one']);
    expect(await prepared()).toBe(before);
    // Another preparing store (a second worker's pool) gets names of its own.
    const other = new PgMessageStore(backend.pool());
    expect(await other.readChain('two-stores', nodes[1]!.hash)).toEqual(nodes);
    await other.putChain('two-stores', blobs, nodes);
    expect(await store.readChain('two-stores', nodes[1]!.hash)).toEqual(nodes);
  });

  it('reads a chain root first and a shared prefix once for each branch', async () => {
    const { blobs, nodes } = chain(['one', 'two', 'three']);
    const branch = chain(['four'], nodes[2]!.hash);
    const other = chain(['alt'], nodes[1]!.hash);
    await store.putBlobs('chain', [...blobs, ...branch.blobs, ...other.blobs]);
    await store.putNodes('chain', [...branch.nodes, ...nodes, ...other.nodes]); // order of writing does not matter
    expect(await store.readChain('chain', branch.nodes[0]!.hash)).toEqual([...nodes, ...branch.nodes]);
    expect(await store.readChain('chain', other.nodes[0]!.hash)).toEqual([nodes[0], nodes[1], other.nodes[0]]);
    expect(await store.readChain('chain', nodes[0]!.hash)).toEqual([nodes[0]]);
    const bodies = await store.getBlobs('chain', [blobs[2]!.hash, 'f'.repeat(64), blobs[0]!.hash]);
    expect(bodies).toEqual(new Map([[blobs[2]!.hash, 'three'], [blobs[0]!.hash, 'one']]));
  });

  it('names the session and the missing node when a chain is broken, or its head is not stored', async () => {
    const { blobs, nodes } = chain(['a', 'b', 'c', 'd']);
    await store.putBlobs('broken', blobs);
    await store.putNodes('broken', [nodes[0]!, nodes[2]!, nodes[3]!]);
    const err = await store.readChain('broken', nodes[3]!.hash).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toContain(`conversation node ${nodes[1]!.hash} of session broken is missing`);
    const headless = await store.readChain('broken', 'e'.repeat(64)).catch((e: unknown) => e);
    expect(headless).toBeInstanceOf(StoreUnavailableError);
    expect((headless as Error).message).toContain(`conversation node ${'e'.repeat(64)} of session broken is missing`);
    // The same chain in another session is not this session's.
    await store.putNodes('elsewhere', nodes);
    await expect(store.readChain('broken', nodes[3]!.hash)).rejects.toThrow(StoreUnavailableError);
  });

  it('writes and reads back a 3 MB body and a conversation of 2 MB in one batch, byte for byte', async () => {
    // Varied content (not one repeated byte), several scripts, a NUL character a text column would refuse.
    const big = Array.from({ length: 3 * 1024 * 1024 / 64 }, (_, i) => `${i.toString(36).padStart(8, '0')} line ünïcödé 汉字 ${'x'.repeat(30)}\n`).join('') + '\u0000end';
    expect(Buffer.byteLength(big)).toBeGreaterThan(3 * 1024 * 1024);
    await store.putBlobs('big', [{ hash: sha(big), body: big }]);
    expect((await store.getBlobs('big', [sha(big)])).get(sha(big))).toBe(big);
    const { rows } = await pool.query<{ bytes: number }>('SELECT bytes FROM message_blobs WHERE session_id = $1', ['big']);
    expect(rows).toEqual([{ bytes: Buffer.byteLength(big) }]);

    const messages = Array.from({ length: 200 }, (_, i) => JSON.stringify({ role: 'tool', content: `${i} ${'r'.repeat(10_000)}` }));
    const conv = chain(messages);
    await store.putBlobs('big', conv.blobs);
    await store.putNodes('big', conv.nodes);
    const read = await store.readChain('big', conv.nodes.at(-1)!.hash);
    expect(read).toHaveLength(200);
    const got = await store.getBlobs('big', read.map((n) => n.blob));
    expect(read.map((n) => got.get(n.blob))).toEqual(messages);
  });

  it("purges exactly one session's rows and leaves another session holding the same hashes", async () => {
    const { blobs, nodes } = chain(['shared body 1', 'shared body 2', 'shared body 3']);
    for (const s of ['gone', 'kept']) {
      await store.putBlobs(s, blobs);
      await store.putNodes(s, nodes);
    }
    expect(await store.purge('gone')).toBe(6);
    expect(await count('message_blobs', 'gone')).toBe(0);
    expect(await count('message_nodes', 'gone')).toBe(0);
    expect(await store.readChain('kept', nodes[2]!.hash)).toEqual(nodes);
    expect(await count('message_blobs', 'kept')).toBe(3);
    expect(await store.purge('gone')).toBe(0);
    expect(await store.sessionsIdleSince(new Date(Date.now() + 3_600_000))).not.toContain('gone');
  });

  it('purges a session larger than one delete batch', async () => {
    const blobs = Array.from({ length: 4_500 }, (_, i) => ({ hash: sha(`many ${i}`), body: `many ${i}` }));
    await store.putBlobs('many', blobs);
    expect(await store.purge('many')).toBe(4_500);
    expect(await count('message_blobs', 'many')).toBe(0);
  });

  it('lists the sessions whose last write is older than a date; a write, even of stored rows, makes a session active again', async () => {
    const { blobs, nodes } = chain(['idle body']);
    for (const s of ['idle-old', 'idle-new']) {
      await store.putBlobs(s, blobs);
      await store.putNodes(s, nodes);
    }
    await pool.query("UPDATE message_sessions SET last_write = now() - interval '40 days' WHERE session_id = 'idle-old'");
    const monthAgo = new Date(Date.now() - 30 * 24 * 3_600_000);
    const idle = await store.sessionsIdleSince(monthAgo);
    expect(idle).toContain('idle-old');
    expect(idle).not.toContain('idle-new');
    await store.putBlobs('idle-old', blobs);
    expect(await store.sessionsIdleSince(monthAgo)).not.toContain('idle-old');
  });

  it('passes a query bug through as it is, not as an unavailable store', async () => {
    const broken = await open();
    try {
      // A table of the right name and the wrong shape, found first on the search path (other
      // test files may have migrated the shared public schema): the insert is a query bug.
      const pool = broken.pool();
      await pool.query('CREATE TABLE message_blobs (session_id text)');
      const err = await new PgMessageStore(pool).putBlobs('s', [{ hash: 'h', body: 'b' }]).catch((e: unknown) => e);
      expect(err).not.toBeInstanceOf(StoreUnavailableError);
      // undefined_column, or undefined_table where no message_sessions table is on the path either
      expect(['42703', '42P01']).toContain((err as { code?: string }).code);
    } finally {
      await broken.teardown();
    }
  });
});
