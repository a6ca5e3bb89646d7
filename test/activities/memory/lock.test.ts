/**
 * The embedded database's folder lock: a second opener in the same process or in another
 * process gets MemoryUnavailableError naming the holder (and never touches the folder), the
 * lock goes away with the holder even when it is killed, and the folder then opens intact.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync, realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../../activities/memory/embedded';
import { embeddedDataDir } from '../../../machine/paths';
import { MemoryUnavailableError } from '../../../activities/memory/errors';
import { Database } from '../../../activities/memory/database';
import { lockDataDir, lockFilePath } from '../../../activities/memory/lock';
import { createToolExecutor } from '../../../activities/tools/executor';
import { kill, ROOT } from '../../support/processes';

const homes: string[] = [];
const hosts: Database[] = [];
const children: ChildProcess[] = [];

function newHome(): string {
  const home = mkdtempSync(path.join(os.tmpdir(), 'memlock-'));
  homes.push(home);
  return home;
}

function host(home: string, opts: Partial<ConstructorParameters<typeof Database>[0]> = {}): Database {
  const h = new Database({ home, ...opts });
  hosts.push(h);
  return h;
}

const refusal = (dir: string, holder: string) =>
  `memory database unavailable: the embedded database ${dir} is in use by ${holder}; only one worker can open it: set DATABASE_URL to share memory between workers`;

// Runs a TypeScript file in a fresh Node process: the same source the tests import, no build needed.
const TS_REQUIRE_HOOK = `
const fs = require('fs');
const ts = require(${JSON.stringify(path.join(ROOT, 'node_modules', 'typescript'))});
require.extensions['.ts'] = (m, file) => m._compile(ts.transpileModule(fs.readFileSync(file, 'utf8'), {
  fileName: file,
  compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
}).outputText, file);
require(process.argv[1]);
`;

/** Starts memory-holder.ts on home and resolves with its pid once it holds the database. */
async function spawnHolder(home: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', TS_REQUIRE_HOOK, path.join(__dirname, 'memory-holder.ts'), home], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      if (output.includes('ready')) resolve();
      if (output.includes('failed')) reject(new Error(`holder failed: ${output}`));
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`holder exited early (${code}): ${output}`)));
  });
  return child;
}

afterEach(async () => {
  for (const h of hosts.splice(0)) await h.close();
  for (const c of children.splice(0)) await kill(c, 'SIGKILL');
});
afterAll(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

describe('the embedded database lock', () => {
  it('refuses a second Database in the same process with one line naming this process, then opens with the data once the first closes', async () => {
    const home = newHome();
    const first = host(home);
    const { id } = await (await first.store()).remember('shared', 's1', 'The first host wrote this');

    const second = host(home);
    const dir = realpathSync(embeddedDataDir(home));
    const err = await second.store().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MemoryUnavailableError);
    expect((err as Error).message).toBe(refusal(dir, `this process (pid ${process.pid})`));

    // The model sees the same single line, the prefix once.
    const executor = createToolExecutor({ home, memory: () => second.store() });
    const r = await executor.execute({ sessionId: 'lock-s1', name: 'recall', args: { query: 'first host' } });
    expect(r).toMatchObject({ ok: false, error_type: 'MEMORY_UNAVAILABLE', message: refusal(dir, `this process (pid ${process.pid})`) });

    await first.close();
    const hits = await (await second.store()).recall('shared', 'first host', 5);
    expect(hits).toMatchObject([{ id, text: 'The first host wrote this' }]);
  }, 120_000);

  it('refuses while another process holds the folder, naming its pid, and the folder opens intact after that process is killed', async () => {
    const home = newHome();
    const holder = await spawnHolder(home);

    const blocked = host(home);
    const err = await blocked.store().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MemoryUnavailableError);
    expect((err as Error).message).toBe(refusal(realpathSync(embeddedDataDir(home)), `another process (pid ${holder.pid})`));

    // SIGKILL: no exit handler runs, yet the kernel frees the lock with the process.
    await kill(holder, 'SIGKILL');
    const store = await blocked.store();
    expect((await store.recent('held', 5)).map((m) => m.text)).toEqual([`written by the holder process ${holder.pid}`]);
    await store.remember('held', 'parent', 'written after the holder died');
    await blocked.close();

    // And it opens again in a fresh host: the folder was neither damaged by the refused opener nor by the kill.
    const again = await host(home).store();
    expect(await again.recent('held', 5)).toHaveLength(2);
  }, 180_000);

  it('treats two paths of one folder as one lock', async () => {
    const home = newHome();
    const real = path.join(home, 'data');
    mkdirSync(real);
    symlinkSync(real, path.join(home, 'alias'));
    const lock = await lockDataDir(real);
    await expect(lockDataDir(path.join(home, 'alias'))).rejects.toBeInstanceOf(MemoryUnavailableError);
    await expect(lockDataDir(path.join(home, 'alias', '..', 'data'))).rejects.toBeInstanceOf(MemoryUnavailableError);
    await lock.release();
    const relocked = await lockDataDir(path.join(home, 'alias'));
    await relocked.release();
  });

  it('falls back to a pid file that refuses a live holder and is taken over from a dead one', async () => {
    const home = newHome();
    const dataDir = path.join(home, 'pgdata');
    const db = await startEmbeddedPostgres({ dataDir, lockMethod: 'file' });
    const file = lockFilePath(realpathSync(dataDir));
    try {
      expect(readFileSync(file, 'utf8').trim()).toBe(String(process.pid));
      const err = await startEmbeddedPostgres({ dataDir, lockMethod: 'file' }).catch((e: unknown) => e);
      expect((err as Error).message).toBe(refusal(realpathSync(dataDir), `this process (pid ${process.pid})`));
    } finally {
      await db.close();
    }
    expect(existsSync(file), 'closing removes the pid file').toBe(false);

    // A live process named in the file holds the folder.
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    children.push(sleeper);
    writeFileSync(file, `${sleeper.pid}\n`);
    await expect(lockDataDir(dataDir, 'file')).rejects.toThrow(`another process (pid ${sleeper.pid})`);

    // Once it is gone, the file is stale and the next opener takes it over.
    await kill(sleeper, 'SIGKILL');
    const lock = await lockDataDir(dataDir, 'file');
    expect(readFileSync(file, 'utf8').trim()).toBe(String(process.pid));
    await lock.release();
    expect(existsSync(file)).toBe(false);
  }, 120_000);
});
