/**
 * A scripted model that lives as long as its process (the worker's own server, `harness model
 * serve`) keeps no record of requests: each record holds the whole request body, so a worker
 * running thousands of scripted sessions (every eval trial is one) grew by every request it served.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import { ScriptedModels } from '../../activities/scripted-models';

const started = vi.hoisted(() => [] as { record?: boolean }[]);
vi.mock('../../scripted-model/server', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../scripted-model/server')>();
  return { ...real, startScriptedModel: (o: Parameters<typeof real.startScriptedModel>[0]) => (started.push({ ...o }), real.startScriptedModel(o)) };
});

const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  started.length = 0;
});

const ask = (baseURL: string, session: string) =>
  new OpenAI({ baseURL, apiKey: 'x', maxRetries: 0 }).chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-harness-session': session } });

describe('a scripted model without a record', () => {
  it('answers and tells its listeners, but holds no request', async () => {
    const server = await startScriptedModel({ script: { steps: [{ content: 'one' }, { content: 'two' }] }, record: false });
    servers.push(server);
    const seen: (number | null)[] = [];
    server.onRequest((r) => seen.push(r.index));
    expect((await ask(server.url, 'default')).choices[0]!.message.content).toBe('one');
    expect((await ask(server.url, 'default')).choices[0]!.message.content).toBe('two');
    expect(seen).toEqual([0, 1]);
    expect(server.requests).toEqual([]);
  });

  it('is what the worker starts for its scripted sessions', async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'harness-record-'));
    const models = new ScriptedModels(home);
    try {
      await models.register('s1', { steps: [{ content: 'hello' }] });
      expect((await ask(await models.baseUrl('s1'), 's1')).choices[0]!.message.content).toBe('hello');
      expect(started).toEqual([expect.objectContaining({ record: false })]);
    } finally {
      await models.close();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('keeps the record by default, as the tests that read it expect', async () => {
    const server = await startScriptedModel({ script: { steps: [{ content: 'one' }] } });
    servers.push(server);
    await ask(server.url, 'default');
    expect(server.requests.map((r) => r.index)).toEqual([0]);
  });
});
