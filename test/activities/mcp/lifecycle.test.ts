import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpUnavailableError } from '../../../activities/mcp/errors';
import { McpPool } from '../../../activities/mcp/pool';
import { alive, countedEverything, everythingStdio, stdioSpec, textOf, until } from '../../support/mcp-servers';

/** The session the pool's connections serve here. */
const S = { sessionId: 's-pool-test' };

let tmp: string;
const pools: McpPool[] = [];
function newPool(opts: Partial<ConstructorParameters<typeof McpPool>[0]> = {}): McpPool {
  const pool = new McpPool({ env: {}, ...opts });
  pools.push(pool);
  return pool;
}

beforeEach(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-pool-')));
});
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.closeAll()));
  fs.rmSync(tmp, { recursive: true, force: true });
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.closeAll()));
});

const lines = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).length : 0);

describe('McpPool connections', () => {
  it('serves many calls of one session with one process', async () => {
    const spawns = path.join(tmp, 'spawns');
    const pool = newPool();
    const spec = countedEverything(spawns);
    // The same server with other settings for its tools: policy settings do not make a second process.
    const sameServer = { ...spec, risk: 'read_only' as const, callTimeoutMs: 5000 };
    await pool.listTools(spec, { scope: S, timeoutMs: 30_000 });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => pool.callTool(i % 2 ? spec : sameServer, 'echo', { message: `m${i}` }, { scope: S, timeoutMs: 30_000 })),
    );
    expect(results.map(textOf)).toEqual(Array.from({ length: 20 }, (_, i) => `Echo: m${i}`));
    expect(pool.stats()).toEqual([expect.objectContaining({ server: 'counted', connected: true, spawns: 1, calls: 20 })]);
    expect(lines(spawns)).toBe(1);
  });

  it('restarts a server that died between two calls', async () => {
    const spawns = path.join(tmp, 'spawns');
    const pool = newPool();
    const spec = countedEverything(spawns);
    expect(textOf(await pool.callTool(spec, 'echo', { message: 'one' }, { scope: S, timeoutMs: 30_000 }))).toBe('Echo: one');
    const pid = pool.stats()[0]!.pid!;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, 'SIGKILL');
    await until(() => !pool.stats()[0]!.connected);
    expect(textOf(await pool.callTool(spec, 'echo', { message: 'two' }, { scope: S, timeoutMs: 30_000 }))).toBe('Echo: two');
    expect(pool.stats()[0]).toMatchObject({ connected: true, spawns: 2 });
    expect(pool.stats()[0]!.pid).not.toBe(pid);
    expect(lines(spawns)).toBe(2);
  });

  it('a server killed during a call fails that call as unavailable, and the next call restarts it', async () => {
    const pool = newPool();
    const spec = everythingStdio();
    await pool.listTools(spec, { scope: S, timeoutMs: 30_000 });
    const pid = pool.stats()[0]!.pid!;
    const call = pool.callTool(spec, 'trigger-long-running-operation', { duration: 30, steps: 3 }, { scope: S, timeoutMs: 60_000 }).catch((e: unknown) => e);
    await sleep(300);
    process.kill(pid, 'SIGKILL');
    const err = await call;
    expect(err).toBeInstanceOf(McpUnavailableError);
    expect((err as Error).message).toMatch(/^mcp server everything: connection closed/);
    expect(textOf(await pool.callTool(spec, 'echo', { message: 'back' }, { scope: S, timeoutMs: 30_000 }))).toBe('Echo: back');
    expect(pool.stats()[0]!.spawns).toBe(2);
  });

  it('a command that does not exist is unavailable, named in the message', async () => {
    const pool = newPool();
    const spec = stdioSpec('missing', '/nonexistent/mcp-server', []);
    const err = await pool.listTools(spec, { scope: S, timeoutMs: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpUnavailableError);
    expect((err as Error).message).toMatch(/^mcp server missing: cannot start \/nonexistent\/mcp-server: .*ENOENT/);
    expect((err as Error).message).not.toContain('\n');
    const again = await pool.callTool(spec, 'x', {}, { scope: S, timeoutMs: 30_000 }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(McpUnavailableError);
  }, 10_000);

  it('a server that exits at once is unavailable, with the end of its stderr', async () => {
    const pool = newPool();
    const spec = stdioSpec('crashy', process.execPath, ['-e', 'console.error("boom: missing API key"); process.exit(3)']);
    const err = await pool.listTools(spec, { scope: S, timeoutMs: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpUnavailableError);
    expect((err as Error).message).toMatch(/^mcp server crashy: .*boom: missing API key/);
  });

  it('a server that never answers initialize times out and its process is killed', async () => {
    const pool = newPool();
    const pidFile = path.join(tmp, 'pid');
    const spec = stdioSpec('hung', '/bin/sh', ['-c', `echo $$ > '${pidFile}'; exec '${process.execPath}' -e 'setInterval(() => {}, 1e9)'`]);
    const err = await pool.listTools(spec, { scope: S, timeoutMs: 1500 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpUnavailableError);
    expect((err as Error).message).toMatch(/^mcp server hung: did not (start|list its tools) within 1.5s/);
    expect((err as Error).message).toContain('(give it longer: mcpServers.hung.startupTimeoutSec, in seconds)');
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    await until(() => !alive(pid));
    expect(pool.stats()[0]).toMatchObject({ connected: false });
  });

  it('a call longer than its timeout is unavailable, and the server keeps serving', async () => {
    const pool = newPool();
    const spec = everythingStdio();
    const progress: number[] = [];
    const err = await pool
      .callTool(spec, 'trigger-long-running-operation', { duration: 8, steps: 8 }, { scope: S, timeoutMs: 2500, onActivity: () => progress.push(1) })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpUnavailableError);
    expect((err as Error).message).toBe('mcp server everything: trigger-long-running-operation did not answer within 2.5s');
    expect(progress.length).toBeGreaterThan(0);
    expect(textOf(await pool.callTool(spec, 'echo', { message: 'next' }, { scope: S, timeoutMs: 30_000 }))).toBe('Echo: next');
    expect(pool.stats()[0]).toMatchObject({ connected: true, spawns: 1 });
  });

  it('the caller\'s abort signal cancels a call', async () => {
    const pool = newPool();
    const spec = everythingStdio();
    const ac = new AbortController();
    const call = pool.callTool(spec, 'trigger-long-running-operation', { duration: 20, steps: 2 }, { scope: S, timeoutMs: 60_000, signal: ac.signal }).catch((e: unknown) => e);
    await sleep(500);
    ac.abort(new Error('activity cancelled'));
    expect(await call).toMatchObject({ message: 'activity cancelled' });
    expect(textOf(await pool.callTool(spec, 'echo', { message: 'after' }, { scope: S, timeoutMs: 30_000 }))).toBe('Echo: after');
  });

  it('closes idle connections and reconnects on the next call', async () => {
    const pool = newPool({ idleMs: 300 });
    const spec = everythingStdio();
    await pool.callTool(spec, 'echo', { message: 'a' }, { scope: S, timeoutMs: 30_000 });
    const pid = pool.stats()[0]!.pid!;
    // Closed and forgotten: a session that ended leaves neither a process nor an entry.
    await until(() => pool.stats().length === 0);
    await until(() => !alive(pid));
    expect(textOf(await pool.callTool(spec, 'echo', { message: 'b' }, { scope: S, timeoutMs: 30_000 }))).toBe('Echo: b');
    expect(pool.stats()).toEqual([expect.objectContaining({ connected: true, spawns: 1 })]);
    expect(pool.stats()[0]!.pid).not.toBe(pid);
  });

  it('closeAll leaves no server process behind', async () => {
    const pool = newPool();
    const a = everythingStdio();
    const b = countedEverything(path.join(tmp, 'spawns'));
    await Promise.all([pool.callTool(a, 'echo', { message: 'a' }, { scope: S, timeoutMs: 30_000 }), pool.callTool(b, 'echo', { message: 'b' }, { scope: S, timeoutMs: 30_000 })]);
    const pids = pool.stats().map((s) => s.pid!);
    expect(pids).toHaveLength(2);
    expect(pids.every(alive)).toBe(true);
    await pool.closeAll();
    expect(pids.filter(alive)).toEqual([]);
    expect(pool.stats().map((s) => s.connected)).toEqual([false, false]);
  });
});
