/**
 * Long-term memory through real turns: persists across sessions, preloads into the system
 * message, recall finds Chinese text, namespaces isolate, a database that is down is a
 * structured error, and the embedded PGlite default runs the same code.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { Database } from '../../activities/memory/database';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const started: { h: TestHarness; memory: Database }[] = [];

async function harness(databaseUrl?: string) {
  const home = mkdtempSync(path.join(os.tmpdir(), 'harness-mem-'));
  const memory = new Database({ home, ...(databaseUrl ? { databaseUrl } : {}) });
  const h = await startHarness({ home, memory });
  started.push({ h, memory });
  return h;
}

afterAll(async () => {
  for (const { h, memory } of started) {
    await h.stop();
    await memory.close();
  }
});

const withMemory = (script: unknown, namespace: string) => ({ ...scriptedConfig(script), memory: { namespace, preload: 5 } });

describe('long-term memory in turns', () => {
  it('remembers in one session and recalls (in Chinese) in another of the same namespace only', async () => {
    const h = await harness(DATABASE_URL);
    const ns = `test-${randomUUID()}`;
    const fact = '我们决定使用 PostgreSQL 数据库存储记忆';
    // Under the default policy a long-term write asks first (risk `write`); the person approves.
    const a = await h.finishApproving(
      newSessionId('mem'),
      withMemory({ steps: [{ tool_calls: [{ name: 'remember_longterm', arguments: { text: fact } }] }, { content: 'saved' }] }, ns),
      'Remember our database decision.',
    );
    expect(a.asked).toEqual([`remember_longterm: ${JSON.stringify({ text: fact })}`]);
    expect(a.toolCalls[0]).toMatchObject({ name: 'remember_longterm', ok: true });

    const b = await h.finish(
      newSessionId('mem'),
      withMemory(
        {
          steps: [
            { expect: { system_contains: 'PostgreSQL' }, tool_calls: [{ name: 'recall', arguments: { query: '数据库' } }] },
            { expect: { last_message_contains: 'PostgreSQL' }, content: 'We use PostgreSQL.' },
          ],
        },
        ns,
      ),
      'Which database did we choose?',
    );
    expect(b.terminated_by).toBe('final_answer');

    const other = await h.finish(
      newSessionId('mem'),
      withMemory(
        {
          steps: [
            { tool_calls: [{ name: 'recall', arguments: { query: '数据库' } }] },
            { expect: { last_message_contains: '"memories":[]' }, content: 'Nothing remembered here.' },
          ],
        },
        `${ns}-other`,
      ),
      'Which database did we choose?',
    );
    expect(other.terminated_by).toBe('final_answer');
  }, 60_000);

  it('gives the model MEMORY_UNAVAILABLE when the database is down, and the turn goes on', async () => {
    const h = await harness('postgres://postgres@127.0.0.1:1/test');
    const r = await h.finish(
      newSessionId('mem'),
      withMemory(
        {
          steps: [
            { tool_calls: [{ name: 'recall', arguments: { query: 'anything' } }] },
            { expect: { last_message_contains: 'MEMORY_UNAVAILABLE' }, content: 'Memory is down; continuing.' },
          ],
        },
        'down',
      ),
      'Recall something.',
    );
    expect(r.terminated_by).toBe('final_answer');
    expect(r.toolCalls[0]).toMatchObject({ name: 'recall', ok: false, error_type: 'MEMORY_UNAVAILABLE' });
  }, 60_000);

  it('runs the same code on the embedded PGlite default when no DATABASE_URL is set', async () => {
    const h = await harness();
    const ns = 'embedded';
    const r = await h.finishApproving(
      newSessionId('mem'),
      withMemory(
        {
          steps: [
            { tool_calls: [{ name: 'remember_longterm', arguments: { text: 'The deploy target is Kubernetes.' } }] },
            { tool_calls: [{ name: 'recall', arguments: { query: 'deploy target' } }] },
            { expect: { last_message_contains: 'Kubernetes' }, content: 'Kubernetes.' },
          ],
        },
        ns,
      ),
      'Remember and recall.',
    );
    expect(r.terminated_by).toBe('final_answer');
    expect(r.asked).toHaveLength(1);
    expect(r.toolCalls.map((c) => c.ok)).toEqual([true, true]);
  }, 90_000);
});
