// SandboxPool against the real Docker Engine: no skips.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerName, removeOrphans } from '../../../activities/sandbox/docker-sandbox';
import { execsDir } from '../../../activities/sandbox/exec-record';
import { SandboxPool } from '../../../activities/sandbox/pool';

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
  it('removes the containers and exec records of sessions that no longer run at worker start, keeping the running ones', async () => {
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
});
