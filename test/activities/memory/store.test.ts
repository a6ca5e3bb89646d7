import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../activities/memory/store';
import { embeddedPostgres, realPostgres, TEST_DATABASE_URL, type Backend } from './backends';

const DAY = 24 * 3600 * 1000;

// The same cases run against both databases: the embedded default must behave like the real one.
describe.each([
  ['real Postgres', realPostgres],
  ['embedded PGlite', embeddedPostgres],
])('the memory store on %s', (_name, open) => {
  let backend: Backend;
  let store: MemoryStore;

  beforeAll(async () => {
    backend = await open();
    store = new MemoryStore(backend.pool());
    await store.migrate();
  });
  afterAll(async () => backend?.teardown());

  it('applies migrations once and is a no-op when run again, even concurrently', async () => {
    expect(await store.migrate()).toEqual([]);
    const again = await Promise.all([1, 2, 3].map(() => new MemoryStore(backend.pool()).migrate()));
    expect(again).toEqual([[], [], []]);
    const { rows } = await backend.pool().query('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r: { version: number }) => r.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('recalls an English memory by a word and by a misspelt or inflected form', async () => {
    await store.remember('en', 's1', 'The deployment target for the billing service is Kubernetes in eu-west-1');
    await store.remember('en', 's1', 'Lunch preference: vegetarian ramen on Fridays');
    expect((await store.recall('en', 'kubernetes', 3))[0]?.text).toContain('Kubernetes');
    expect((await store.recall('en', 'kubernets deploy', 3))[0]?.text).toContain('Kubernetes');
    expect((await store.recall('en', 'deployments', 3))[0]?.text).toContain('billing');
    expect((await store.recall('en', 'kuberntes', 3)).map((r) => r.text)).toEqual([expect.stringContaining('Kubernetes')]);
  });

  it('recalls Chinese memories by a word inside text written without spaces', async () => {
    await store.remember('zh', 's1', '我们决定使用 PostgreSQL 数据库存储记忆');
    await store.remember('zh', 's1', '用户喜欢简洁的回答，不要太长');
    const hits = await store.recall('zh', '数据库', 5);
    expect(hits.map((h) => h.text)).toEqual(['我们决定使用 PostgreSQL 数据库存储记忆']);
    expect((await store.recall('zh', '我们用什么数据库', 5))[0]?.text).toContain('数据库');
    expect((await store.recall('zh', 'postgres', 5))[0]?.text).toContain('数据库');
    expect((await store.recall('zh', '简洁回答', 5))[0]?.text).toContain('简洁');
    expect((await store.recall('zh', '库', 5)).map((r) => r.text)).toEqual(['我们决定使用 PostgreSQL 数据库存储记忆']);
  });

  it('finds a longer known word that contains the query word, even when the word itself is known', async () => {
    await store.remember('words', null, 'We run postgres 15 in staging');
    await store.remember('words', null, 'Production runs on PostgreSQL 16');
    const texts = (await store.recall('words', 'postgres', 5)).map((r) => r.text);
    expect(texts).toHaveLength(2);
    expect(texts[0]).toBe('We run postgres 15 in staging');
  });

  it('ranks the more relevant memory first and, among equals, the newer one', async () => {
    const old = new Date(Date.now() - 60 * DAY);
    await store.remember('rank', null, 'Database migrations run with an advisory lock in Postgres', { createdAt: old });
    await store.remember('rank', null, 'The team met on Tuesday; the weather was nice and someone mentioned a database');
    const relevant = await store.recall('rank', 'postgres advisory lock migrations', 2);
    expect(relevant[0]?.text).toMatch(/^Database migrations/);
    await store.remember('rank', null, 'Release notes drafted for version alpha', { createdAt: new Date(Date.now() - 30 * DAY) });
    await store.remember('rank', null, 'Release notes drafted for version omega', { createdAt: new Date(Date.now() - 1 * DAY) });
    const recent = await store.recall('rank', 'release notes drafted', 2);
    expect(recent.map((r) => r.text)).toEqual(['Release notes drafted for version omega', 'Release notes drafted for version alpha']);
    expect(recent[0]!.score).toBeGreaterThan(recent[1]!.score);
  });

  it('keeps namespaces isolated from each other', async () => {
    await store.remember('user-a', 's1', 'The secret project codename is Bluebird');
    await store.remember('user-b', 's2', 'The secret project codename is Nightjar');
    expect((await store.recall('user-a', 'project codename', 10)).map((r) => r.text)).toEqual(['The secret project codename is Bluebird']);
    expect((await store.recall('user-b', 'bluebird', 10))).toEqual([]);
    expect((await store.recent('user-b', 10)).map((r) => r.text)).toEqual(['The secret project codename is Nightjar']);
  });

  it('lists the most recent memories newest first and forgets a namespace', async () => {
    for (const n of [1, 2, 3]) await store.remember('recent', 's', `note ${n}`, { createdAt: new Date(Date.now() - (10 - n) * DAY) });
    expect((await store.recent('recent', 2)).map((r) => r.text)).toEqual(['note 3', 'note 2']);
    expect(await store.forgetNamespace('recent')).toBe(3);
    expect(await store.recent('recent', 2)).toEqual([]);
  });

  it('keeps long-term memory across sessions and store instances after a restart', async () => {
    const { id } = await store.remember('persist', 'session-1', 'The user prefers answers in French');
    await backend.restart();
    store = new MemoryStore(backend.pool());
    await store.migrate();
    const hits = await store.recall('persist', 'french answers', 1);
    expect(hits).toMatchObject([{ id, text: 'The user prefers answers in French', session_id: 'session-1' }]);
  });

  it('stores a write with the same request key once and returns the same id, per namespace', async () => {
    const first = await store.remember('idem', 's1', 'Deploys happen on Tuesdays', { requestKey: 's1/turn-1/call_1' });
    const again = await store.remember('idem', 's1', 'Deploys happen on Tuesdays', { requestKey: 's1/turn-1/call_1' });
    expect(again).toEqual(first);
    const concurrent = await Promise.all([1, 2, 3].map(() => store.remember('idem', 's1', 'Racing write', { requestKey: 's1/turn-1/call_2' })));
    expect(new Set(concurrent.map((r) => r.id)).size).toBe(1);
    expect((await store.recent('idem', 10)).map((r) => r.text)).toEqual(['Racing write', 'Deploys happen on Tuesdays']);
    // The key is scoped to its namespace, and writes without a key are never merged.
    const elsewhere = await store.remember('idem-other', 's1', 'Deploys happen on Tuesdays', { requestKey: 's1/turn-1/call_1' });
    expect(elsewhere.id).not.toBe(first.id);
    await store.remember('idem-plain', null, 'same text');
    await store.remember('idem-plain', null, 'same text');
    expect(await store.recent('idem-plain', 10)).toHaveLength(2);
  });

  it('treats LIKE wildcards and punctuation in a query as plain text', async () => {
    await store.remember('wild', null, 'Progress is at 100% for milestone_one');
    await store.remember('wild', null, 'Nothing special here');
    expect((await store.recall('wild', '100%', 5)).map((r) => r.text)).toEqual(['Progress is at 100% for milestone_one']);
    expect(await store.recall('wild', '%%% ___ !!!', 5)).toEqual([]);
  });
});

describe('migrations in a schema of their own', () => {
  it('migrate the first schema of the search path even when a later one is already up to date', async () => {
    const [done, fresh] = [1, 2].map(() => `memmig_${randomBytes(6).toString('hex')}`);
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    const pools: pg.Pool[] = [];
    const poolOn = (searchPath: string) => {
      const p = new pg.Pool({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${searchPath}`, max: 2 });
      pools.push(p);
      return p;
    };
    try {
      await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
      await admin.query(`CREATE SCHEMA ${done}; CREATE SCHEMA ${fresh}`);
      await new MemoryStore(poolOn(`${done},public`)).migrate();
      const store = new MemoryStore(poolOn(`${fresh},${done},public`));
      expect(await store.migrate()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      await store.remember('mine', null, 'stored in the fresh schema');
      const { rows } = await admin.query(`SELECT text FROM ${fresh}.memories`);
      expect(rows).toEqual([{ text: 'stored in the fresh schema' }]);
    } finally {
      await Promise.all(pools.map((p) => p.end()));
      await admin.query(`DROP SCHEMA IF EXISTS ${done} CASCADE; DROP SCHEMA IF EXISTS ${fresh} CASCADE`);
      await admin.end();
    }
  });
});
