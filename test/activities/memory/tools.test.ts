import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../activities/memory/database';
import { MemoryStore } from '../../../activities/memory/store';
import { MemoryUnavailableError } from '../../../activities/memory/errors';
import { recall, recallParams, rememberLongterm, rememberLongtermParams } from '../../../activities/memory/tools';
import { createToolExecutor } from '../../../activities/tools/executor';
import { deadPool, realPostgres, type Backend } from './backends';

const DOWN_URL = 'postgres://postgres@127.0.0.1:1/test';

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
      expect(r.message).toBe('memory database unavailable: connect ECONNREFUSED 127.0.0.1:1');
      expect(r.suggestion).toMatch(/continue without it/);
    }
  });

  it('the executor reports a database that is down with the prefix once, for both tools and a worker without memory', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'memtools-'));
    const host = new Database({ home, databaseUrl: DOWN_URL });
    try {
      const executor = createToolExecutor({ home, memory: () => host.store() });
      for (const [name, args] of [['remember_longterm', { text: 'hello' }], ['recall', { query: 'hello' }]] as const) {
        const r = await executor.execute({ sessionId: 'tools-down', name, args });
        expect(r).toMatchObject({ ok: false, error_type: 'MEMORY_UNAVAILABLE', message: 'memory database unavailable: connect ECONNREFUSED 127.0.0.1:1' });
      }
      const none = await createToolExecutor({ home }).execute({ sessionId: 'tools-down', name: 'recall', args: { query: 'x' } });
      expect(none.message).toBe('memory database unavailable: no memory database is configured on this worker');
    } finally {
      await host.close();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('remember_longterm through the executor stores a call once when its activity is retried, and separate calls separately', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'memtools-'));
    try {
      const executor = createToolExecutor({ home, memory: async () => store });
      const call = { sessionId: 'idem-s', name: 'remember_longterm', args: { text: 'Build with make -j2' }, namespace: 'tools-idem', turnId: 'idem-s/turn-1' };
      const first = await executor.execute({ ...call, callId: 'call_1' });
      const retry = await executor.execute({ ...call, callId: 'call_1' });
      const other = await executor.execute({ ...call, callId: 'call_2' });
      expect(first).toMatchObject({ ok: true, result: { stored: true } });
      expect(retry).toEqual(first);
      expect((other.result as { id: number }).id).not.toBe((first.result as { id: number }).id);
      expect(await store.recent('tools-idem', 10)).toHaveLength(2);
    } finally {
      rmSync(home, { recursive: true, force: true });
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
