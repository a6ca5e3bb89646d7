import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore, MemoryUnavailableError } from '../../../activities/memory/store';
import { recall, recallParams, rememberLongterm, rememberLongtermParams } from '../../../activities/memory/tools';
import { deadPool, realPostgres, type Backend } from './backends';

describe('the memory tools', () => {
  let backend: Backend;
  let store: MemoryStore;

  beforeAll(async () => {
    backend = await realPostgres();
    store = new MemoryStore(backend.pool());
    await store.migrate();
  });
  afterAll(async () => backend?.teardown());

  it('remember_longterm stores text that recall then returns with a score and time', async () => {
    const saved = await rememberLongterm(store, { namespace: 'tools', sessionId: 's1' }, { text: '部署在上海区域的服务器上' });
    expect(saved).toMatchObject({ ok: true, result: { stored: true } });
    const found = await recall(store, { namespace: 'tools' }, { query: '上海', top_k: 3 });
    expect(found.ok).toBe(true);
    const memories = (found.result as { memories: { text: string; created_at: string; score: number }[] }).memories;
    expect(memories).toHaveLength(1);
    expect(memories[0]).toMatchObject({ text: '部署在上海区域的服务器上' });
    expect(memories[0]!.score).toBeGreaterThan(0);
    expect(Number.isNaN(Date.parse(memories[0]!.created_at))).toBe(false);
  });

  it('a database that is down gives both tools a structured, recoverable error', async () => {
    const down = new MemoryStore(deadPool());
    await expect(down.recall('x', 'anything')).rejects.toBeInstanceOf(MemoryUnavailableError);
    await expect(down.migrate()).rejects.toBeInstanceOf(MemoryUnavailableError);
    for (const r of [
      await rememberLongterm(down, { namespace: 'x', sessionId: 's' }, { text: 'hello' }),
      await recall(down, { namespace: 'x' }, { query: 'hello' }),
    ]) {
      expect(r).toMatchObject({ ok: false, error_type: 'MEMORY_UNAVAILABLE', recoverable: true });
      expect(r.message).toMatch(/^memory database unavailable: .*ECONNREFUSED/);
      expect(r.message).not.toContain('\n');
      expect(r.suggestion).toMatch(/continue without it/);
    }
  });

  it('the parameter schemas accept valid calls and reject empty or oversized ones', () => {
    expect(rememberLongtermParams.safeParse({ text: 'x' }).success).toBe(true);
    expect(rememberLongtermParams.safeParse({ text: '' }).success).toBe(false);
    expect(rememberLongtermParams.safeParse({ text: 'x'.repeat(4001) }).success).toBe(false);
    expect(recallParams.safeParse({ query: 'q', top_k: 50 }).success).toBe(true);
    expect(recallParams.safeParse({ query: 'q', top_k: 51 }).success).toBe(false);
    expect(recallParams.safeParse({ query: '' }).success).toBe(false);
  });
});
