/**
 * Purging a session on the worker (the purgeSession activity's body) against real Postgres and
 * a real HARNESS_HOME: exactly the session's rows and folders go, long-term memory stays, and
 * removal never follows a symbolic link out of HARNESS_HOME nor acts on a malformed id.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../activities/memory/store';
import { StoreUnavailableError, type MessageStore } from '../../../activities/store/message-store';
import { PgMessageStore } from '../../../activities/store/pg-message-store';
import { purgeSessionData, type RetentionDeps } from '../../../activities/store/purge';
import { deadPool, realPostgres, type Backend } from '../memory/backends';

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

let backend: Backend;
let pool: pg.Pool;
let store: PgMessageStore;
const dirs: string[] = [];

function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** What a session leaves under a home: workspace (with a nested folder), records, its script. */
function seedFiles(home: string, sessionId: string): string[] {
  const made = [`workspaces/${sessionId}`, `execs/${sessionId}`, `applied/${sessionId}`, `scripts/${sessionId}.json`];
  mkdirSync(path.join(home, 'workspaces', sessionId, 'src', 'deep'), { recursive: true });
  writeFileSync(path.join(home, 'workspaces', sessionId, 'src', 'deep', 'main.py'), 'print(1)\n');
  mkdirSync(path.join(home, 'execs', sessionId, 'abc'), { recursive: true });
  writeFileSync(path.join(home, 'execs', sessionId, 'abc', 'meta.json'), '{}');
  mkdirSync(path.join(home, 'applied', sessionId), { recursive: true });
  writeFileSync(path.join(home, 'applied', sessionId, 'k.json'), '{}');
  mkdirSync(path.join(home, 'scripts'), { recursive: true });
  writeFileSync(path.join(home, 'scripts', `${sessionId}.json`), '{"steps":[]}');
  return made;
}

async function seedRows(sessionId: string): Promise<void> {
  await store.putBlobs(sessionId, [{ hash: sha('m'), body: 'm' }]);
  await store.putNodes(sessionId, [{ hash: sha(`:${sha('m')}`), parent: null, blob: sha('m') }]);
}

function deps(home: string, overrides: Partial<RetentionDeps> = {}): RetentionDeps & { removedSandboxes: string[] } {
  const removedSandboxes: string[] = [];
  return {
    home,
    messages: async () => store,
    sandboxes: { remove: async (id: string) => void removedSandboxes.push(id) },
    removedSandboxes,
    ...overrides,
  };
}

beforeAll(async () => {
  backend = await realPostgres();
  pool = backend.pool();
  const memory = new MemoryStore(pool);
  await memory.migrate();
  store = new PgMessageStore(pool);
});
afterAll(async () => {
  await backend?.teardown();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('purging a session on the worker', () => {
  it("removes the session's rows, folders, script and container, and nothing of another session or of long-term memory", async () => {
    const home = tempDir('purge-home-');
    const made = seedFiles(home, 'p-gone');
    seedFiles(home, 'p-kept');
    await seedRows('p-gone');
    await seedRows('p-kept');
    const memory = new MemoryStore(pool);
    await memory.remember('team', 'p-gone', 'The session wrote this long-term note');
    const d = deps(home);

    const report = await purgeSessionData(d, 'p-gone');
    expect(report).toEqual({ sessionId: 'p-gone', storeRows: 2, removed: made, sandboxRemoved: true, problems: [] });
    expect(d.removedSandboxes).toEqual(['p-gone']);
    for (const rel of made) expect(existsSync(path.join(home, rel)), rel).toBe(false);
    for (const rel of ['workspaces/p-kept/src/deep/main.py', 'execs/p-kept/abc/meta.json', 'applied/p-kept/k.json', 'scripts/p-kept.json']) {
      expect(existsSync(path.join(home, rel)), rel).toBe(true);
    }
    expect((await store.getBlobs('p-kept', [sha('m')])).size).toBe(1);
    expect((await memory.recent('team', 5)).map((m) => m.text)).toEqual(['The session wrote this long-term note']);

    // Again: nothing left to delete, and that is no error.
    expect(await purgeSessionData(d, 'p-gone')).toEqual({ sessionId: 'p-gone', storeRows: 0, removed: [], sandboxRemoved: true, problems: [] });
  });

  it('deletes a symbolic link in the workspace, never what it points to', async () => {
    const home = tempDir('purge-home-');
    const outside = tempDir('purge-outside-');
    writeFileSync(path.join(outside, 'precious.txt'), 'keep me');
    seedFiles(home, 'p-link');
    symlinkSync(outside, path.join(home, 'workspaces', 'p-link', 'escape'));
    symlinkSync(path.join(outside, 'precious.txt'), path.join(home, 'workspaces', 'p-link', 'src', 'file-link'));

    const report = await purgeSessionData(deps(home), 'p-link');
    expect(report.problems).toEqual([]);
    expect(existsSync(path.join(home, 'workspaces', 'p-link'))).toBe(false);
    expect(readFileSync(path.join(outside, 'precious.txt'), 'utf8')).toBe('keep me');
  });

  it('leaves a records folder reached through a symbolic link out of HARNESS_HOME alone and says so', async () => {
    const home = tempDir('purge-home-');
    const outside = tempDir('purge-outside-');
    mkdirSync(path.join(outside, 'p-out'));
    writeFileSync(path.join(outside, 'p-out', 'elsewhere.txt'), 'not the harness');
    symlinkSync(outside, path.join(home, 'workspaces'));

    const report = await purgeSessionData(deps(home), 'p-out');
    expect(report.removed).toEqual([]);
    expect(report.problems).toEqual(['workspaces/p-out not removed: workspaces is a symbolic link or not a folder; nothing behind it is touched']);
    expect(readFileSync(path.join(outside, 'p-out', 'elsewhere.txt'), 'utf8')).toBe('not the harness');
  });

  it('removes no folder and no container for a malformed session id, but still deletes its stored rows', async () => {
    const home = tempDir('purge-home-');
    seedFiles(home, 'p-victim');
    await seedRows('..');
    const d = deps(home);
    const report = await purgeSessionData(d, '..');
    expect(report).toEqual({ sessionId: '..', storeRows: 2, removed: [], sandboxRemoved: false, problems: ['".." is not a valid session id: no folder or container removed'] });
    expect(d.removedSandboxes).toEqual([]);
    expect(existsSync(path.join(home, 'workspaces', 'p-victim', 'src', 'deep', 'main.py'))).toBe(true);
  });

  it('still removes the folders when Docker does not answer, and reports the container as not checked', async () => {
    const home = tempDir('purge-home-');
    seedFiles(home, 'p-nodocker');
    const report = await purgeSessionData(deps(home, { sandboxes: { remove: async () => Promise.reject(new Error('connect ENOENT /var/run/docker.sock')) } }), 'p-nodocker');
    expect(report.sandboxRemoved).toBe(false);
    expect(report.removed).toContain('workspaces/p-nodocker');
  });

  it('fails with StoreUnavailableError before touching anything when the store is down, so the retry reports everything', async () => {
    const home = tempDir('purge-home-');
    seedFiles(home, 'p-down');
    const dead = deadPool();
    try {
      const down: MessageStore = new PgMessageStore(dead);
      const d = deps(home, { messages: async () => down });
      await expect(purgeSessionData(d, 'p-down')).rejects.toThrow(StoreUnavailableError);
      expect(d.removedSandboxes).toEqual([]);
      expect(existsSync(path.join(home, 'workspaces', 'p-down'))).toBe(true);
    } finally {
      await dead.end();
    }
  });
});
