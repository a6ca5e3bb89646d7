// SandboxPool against the real Docker Engine: no skips.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerName, removeOrphans } from '../../../activities/sandbox/containers';
import { execsDir } from '../../../activities/sandbox/exec-record';
import { SandboxPool } from '../../../activities/sandbox/pool';
import { ensureWorkspace } from '../../../activities/tools/workspace';

const docker = new Docker();
let home: string;

beforeAll(() => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'pool-test-')));
});

afterAll(async () => {
  await removeOrphans(docker, [], { home });
  fs.rmSync(home, { recursive: true, force: true });
});

describe('SandboxPool', () => {
  it('removes the containers and exec records of sessions that no longer run, keeping the running ones', async () => {
    const ended = `pool-${randomUUID().slice(0, 8)}`;
    const running = `pool-${randomUUID().slice(0, 8)}`;
    // Another worker's pool made them; this one starts afresh.
    const before = new SandboxPool({ home });
    for (const id of [ended, running]) await before.get(id).exec('true', { timeoutMs: 20_000, key: 'turn-1/call-1' });
    const after = new SandboxPool({ home });
    const removed = await after.removeOrphans(async (id) => id === running);
    expect(removed).toEqual([containerName(ended)]);
    expect(fs.existsSync(execsDir(home, ended))).toBe(false);
    expect(fs.readdirSync(execsDir(home, running)).length).toBeGreaterThan(0);
    expect((await docker.getContainer(containerName(running)).inspect()).State.Running).toBe(true);
  });

  it('removes the exec records with the container when a session ends', async () => {
    const pool = new SandboxPool({ home });
    const id = `pool-${randomUUID().slice(0, 8)}`;
    await pool.get(id).exec('true', { timeoutMs: 20_000, key: 'turn-1/call-1' });
    await pool.remove(id);
    expect(fs.existsSync(execsDir(home, id))).toBe(false);
    await expect(docker.getContainer(containerName(id)).inspect()).rejects.toMatchObject({ statusCode: 404 });
  });

  it('never removes anything when the owner question fails, nor what a call uses while its owner has ended', async () => {
    const pool = new SandboxPool({ home });
    const id = `pool-${randomUUID().slice(0, 8)}`;
    await pool.get(id).exec('true', { timeoutMs: 20_000, key: 'turn-1/call-1' });
    // Temporal cannot say (unreachable): the sweep fails and nothing of the session is touched.
    await expect(pool.removeOrphans(async () => Promise.reject(new Error('server unreachable')))).rejects.toThrow('server unreachable');
    expect((await docker.getContainer(containerName(id)).inspect()).State.Running).toBe(true);
    expect(fs.readdirSync(execsDir(home, id)).length).toBeGreaterThan(0);
    // A command in flight (its call holds a lease) outlives a sweep that takes its session for ended.
    const running = pool.get(id).exec('echo started > started.txt; sleep 3; echo once >> count.txt', { timeoutMs: 20_000, key: 'turn-1/call-2' });
    const ws = await ensureWorkspace(home, id);
    await waitFor(() => fs.existsSync(path.join(ws, 'started.txt')));
    expect(await new SandboxPool({ home }).removeOrphans(async () => false)).not.toContain(containerName(id));
    expect(await running).toMatchObject({ exitCode: 0 });
    expect(fs.readFileSync(path.join(ws, 'count.txt'), 'utf8')).toBe('once\n');
    // Once no call uses it, an ended session's sandbox goes.
    expect(await new SandboxPool({ home }).removeOrphans(async () => false)).toContain(containerName(id));
  });

  it('stops a sandbox no call used for the idle time, files kept; its next command starts it again, on this worker or another', async () => {
    const id = `pool-${randomUUID().slice(0, 8)}`;
    const pool = new SandboxPool({ home });
    // Another worker of the same home, which used the container before it stopped.
    const other = new SandboxPool({ home });
    await pool.get(id).exec('echo kept > kept.txt', { timeoutMs: 20_000, key: 'turn-1/call-1' });
    await other.get(id).exec('true', { timeoutMs: 20_000, key: 'turn-1/call-2' });
    const before = await docker.getContainer(containerName(id)).inspect();
    // Not idle yet: used just now.
    expect(await pool.stopIdle(60_000)).not.toContain(containerName(id));
    expect(await pool.stopIdle(0, Date.now() + 1_000)).toContain(containerName(id));
    expect((await docker.getContainer(containerName(id)).inspect()).State.Running).toBe(false);

    const r = await pool.get(id).exec('cat kept.txt', { timeoutMs: 20_000, key: 'turn-1/call-3' });
    expect(r).toMatchObject({ exitCode: 0, stdout: 'kept\n' });
    const after = await docker.getContainer(containerName(id)).inspect();
    // The same container, started again (not made anew).
    expect(after.Id).toBe(before.Id);
    expect(after.State.Running).toBe(true);
    // The other worker's cached container and shell are gone too: its next command works all the same.
    expect(await pool.stopIdle(0, Date.now() + 1_000)).toContain(containerName(id));
    expect(await other.get(id).exec('cat kept.txt', { timeoutMs: 20_000, key: 'turn-1/call-4' })).toMatchObject({ exitCode: 0, stdout: 'kept\n' });
  });

  it('does not stop a sandbox whose command runs, here or on a worker that is gone', async () => {
    const id = `pool-${randomUUID().slice(0, 8)}`;
    const pool = new SandboxPool({ home });
    const running = pool.get(id).exec('echo started > started.txt; sleep 3; echo once >> count.txt', { timeoutMs: 20_000, key: 'turn-1/call-1' });
    const ws = await ensureWorkspace(home, id);
    await waitFor(() => fs.existsSync(path.join(ws, 'started.txt')));
    // Its call holds a lease.
    expect(await pool.stopIdle(0, Date.now() + 1_000)).not.toContain(containerName(id));
    // A worker killed mid-command holds no lease any more, but its claimed command runs on.
    fs.rmSync(path.join(home, 'sandbox-use', id), { recursive: true, force: true });
    expect(await new SandboxPool({ home }).stopIdle(0, Date.now() + 1_000)).not.toContain(containerName(id));
    expect(await running).toMatchObject({ exitCode: 0 });
    expect(fs.readFileSync(path.join(ws, 'count.txt'), 'utf8')).toBe('once\n');
  });
});

async function waitFor(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !check(); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > deadline) throw new Error('timed out');
  }
}
