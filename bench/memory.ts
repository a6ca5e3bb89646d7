/**
 * bench:memory — recall latency with 100,000 memories in real Postgres (DATABASE_URL or the
 * local test server), against a naive `ILIKE '%term%'` scan of an unindexed copy of the same
 * rows in the same run. Everything lives in a throwaway schema dropped at the end.
 * Target: recall p95 <= 20 ms.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { MemoryStore } from '../activities/memory/store';
import { ARCH_PATHS, architectureCase } from './fixtures/conversations';
import { compressContext, tokenCounter } from '../activities/compress/compress';
import { DEFAULT_COMPRESSION } from '../deterministic/context/plan';
import { fmt, median, percentile } from './stats';

const URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 200);
const TARGET_P95_MS = 20;
const NS = 'bench';
const BATCH = 5_000;

// Deterministic PRNG so runs are comparable.
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)]!;

const WORDS = `database deployment service kubernetes postgres migration index query latency budget invoice customer
release pipeline docker container cluster region backup restore schema table column vector embedding model prompt
token context summary session workflow activity worker retry timeout approval policy sandbox shell script python
typescript compiler linter benchmark memory cache redis queue kafka stream event metric dashboard alert incident
outage rollback feature flag experiment design review meeting deadline sprint roadmap milestone ticket bug crash
profile performance throughput storage bucket upload download network proxy certificate secret password login
user account billing payment refund report export import csv json yaml config environment staging production`.split(/\s+/);
const SYLLABLES = 'ka lo mi ra te su no vi pe da zo ri ku fa ne go'.split(' ');
// A long tail of project names and identifiers, as real notes have.
const NAMES = Array.from({ length: 3000 }, () => pick(SYLLABLES) + pick(SYLLABLES) + pick(SYLLABLES) + (rand() < 0.3 ? pick(SYLLABLES) : ''));
const VERBS = 'decided to use,prefers,asked about,fixed,reported,deployed,reviewed,postponed,measured,documented'.split(',');
const ZH = '数据库 部署 服务器 用户 偏好 简洁 回答 记忆 会议 决定 上海 北京 项目 预算 测试 发布 性能 缓存 日志 告警 迁移 索引 查询 延迟 容器 集群 备份 恢复 文档 模型'.split(' ');
const ZH_GLUE = '我们 的 在 了 和 需要 已经 明天 使用 关于'.split(' ');

function englishMemory(): string {
  const n = 3 + Math.floor(rand() * 5);
  const extra = Array.from({ length: n }, () => pick(WORDS)).join(' ');
  return `The ${pick(NAMES)} team ${pick(VERBS)} ${pick(WORDS)} for ${pick(NAMES)}: ${extra} (ticket ${Math.floor(rand() * 99999)})`;
}

function chineseMemory(): string {
  const n = 4 + Math.floor(rand() * 6);
  return Array.from({ length: n }, () => (rand() < 0.4 ? pick(ZH_GLUE) : pick(ZH))).join('') + (rand() < 0.3 ? ` ${pick(NAMES)}` : '');
}

function makeQuery(i: number): string {
  switch (i % 5) {
    case 0: return pick(NAMES);
    case 1: return `${pick(WORDS)} ${pick(WORDS)}`;
    case 2: return pick(ZH) + (rand() < 0.5 ? pick(ZH) : '');
    case 3: return `what did we decide about ${pick(WORDS)} for ${pick(NAMES)}`;
    default: return pick(NAMES).slice(0, -1) + 'x'; // a typo
  }
}

/** The baseline: every word or CJK run as `ILIKE '%w%'`, newest first, no index. */
async function naive(pool: pg.Pool, query: string, k: number): Promise<unknown[]> {
  const terms = [...new Set(query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
  const where = terms.map((_, i) => `text ILIKE $${i + 3}`).join(' OR ');
  const r = await pool.query(`SELECT id, text FROM naive WHERE namespace = $1 AND (${where}) ORDER BY created_at DESC LIMIT $2`, [
    NS, k, ...terms.map((t) => `%${t.replace(/[\\%_]/g, '\\$&')}%`),
  ]);
  return r.rows;
}

async function timed(queries: string[], fn: (q: string) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (const q of queries) {
    const t0 = performance.now();
    await fn(q);
    out.push(performance.now() - t0);
  }
  return out;
}

async function main(): Promise<void> {
  const schema = `bench_memory_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: URL });
  await admin.connect();
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await admin.query(`CREATE SCHEMA ${schema}`);
  const pool = new pg.Pool({ connectionString: URL, options: `-c search_path=${schema},public`, max: 4 });
  try {
    const store = new MemoryStore(pool);
    await store.migrate();
    const t0 = performance.now();
    const now = Date.now();
    for (let done = 0; done < ROWS; done += BATCH) {
      const n = Math.min(BATCH, ROWS - done);
      const texts = Array.from({ length: n }, () => (rand() < 0.1 ? chineseMemory() : englishMemory()));
      // Spread over a year so the recency term has something to rank.
      const times = texts.map(() => new Date(now - rand() * 365 * 24 * 3600 * 1000).toISOString());
      await pool.query(
        'INSERT INTO memories (namespace, session_id, text, created_at) SELECT $1, s, t, c FROM unnest($2::text[], $3::text[], $4::timestamptz[]) AS u(s, t, c)',
        [NS, texts.map((_, i) => `s${(done + i) % 500}`), texts, times],
      );
    }
    await pool.query('CREATE TABLE naive AS SELECT id, namespace, text, created_at FROM memories');
    await pool.query('ANALYZE memories; ANALYZE naive');
    console.log(`inserted ${ROWS} memories in ${fmt((performance.now() - t0) / 1000, 1)} s (schema ${schema})`);

    const queries = Array.from({ length: QUERIES }, (_, i) => makeQuery(i));
    await timed(queries.slice(0, 20), (q) => store.recall(NS, q, 5)); // warm caches and plans
    await timed(queries.slice(0, 5), (q) => naive(pool, q, 5));
    const hits = (await Promise.all(queries.map((q) => store.recall(NS, q, 5)))).filter((r) => r.length > 0).length;
    const recall = await timed(queries, (q) => store.recall(NS, q, 5));
    const base = await timed(queries, (q) => naive(pool, q, 5));

    console.log(`\n${QUERIES} queries, top 5, ${hits} with at least one hit`);
    console.log(`${'method'.padEnd(28)} ${'p50 ms'.padStart(9)} ${'p95 ms'.padStart(9)}`);
    console.log(`${'recall (indexed, ranked)'.padEnd(28)} ${fmt(median(recall)).padStart(9)} ${fmt(percentile(recall, 95)).padStart(9)}`);
    console.log(`${'naive ILIKE scan'.padEnd(28)} ${fmt(median(base)).padStart(9)} ${fmt(percentile(base, 95)).padStart(9)}`);
    console.log(`speed-up (naive / recall): p50 ${fmt(median(base) / median(recall), 1)}x, p95 ${fmt(percentile(base, 95) / percentile(recall, 95), 1)}x`);
    const p95 = percentile(recall, 95);
    console.log(`target recall p95 <= ${TARGET_P95_MS} ms: ${p95 <= TARGET_P95_MS ? 'met' : 'NOT met'}`);
    if (p95 > TARGET_P95_MS) process.exitCode = 1;
  } finally {
    await pool.end();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

/**
 * The compression ratio on the seed's architecture case (three ~20,000-character sources read
 * in one turn), with the real tokenizer and a fixed summary standing in for the model.
 */
async function architectureRatio(): Promise<void> {
  const messages = architectureCase();
  const summary = `Goal: explain the architecture of src/. Read ${ARCH_PATHS.join(', ')}: classes, imports and exported functions noted.`;
  const r = await compressContext(
    { messages, model: 'gpt-4o', config: { ...DEFAULT_COMPRESSION, contextWindow: 30_000, outputReserve: 4_000, threshold: 0.5, keepTail: 2 }, date: '2026-11-29', force: true },
    { summarize: async () => summary, count: tokenCounter('gpt-4o') },
  );
  console.log(
    `\narchitecture case: ${r.before_chars} -> ${r.after_chars} chars (${fmt(r.before_chars / r.after_chars, 1)}x), ` +
      `${r.before_tokens} -> ${r.after_tokens} tokens (${fmt(r.before_tokens / r.after_tokens, 1)}x); target >= 6x`,
  );
}

main()
  .then(architectureRatio)
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
