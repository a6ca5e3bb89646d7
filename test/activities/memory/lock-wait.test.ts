/**
 * Waiting for the embedded database's folder lock (what a second worker on one HARNESS_HOME
 * does instead of polling without its database) and asking who holds it (what `harness run`
 * asks before starting a background worker), with both lock methods.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { dataDirHolder, DataDirInUseError, lockDataDir, waitForDataDirLock, type LockMethod } from '../../../activities/memory/lock';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'lock-wait-'));
  dirs.push(d);
  return d;
}

describe.each<LockMethod>(['socket', 'file'])('the %s lock', (method) => {
  it('names its holder while held and nobody once released', async () => {
    const dir = newDir();
    expect(await dataDirHolder(dir, method)).toBeUndefined();
    const lock = await lockDataDir(dir, method);
    expect(await dataDirHolder(dir, method)).toBe(process.pid);
    await lock.release();
    expect(await dataDirHolder(dir, method)).toBeUndefined();
    expect(await dataDirHolder(path.join(dir, 'missing'), method)).toBeUndefined();
  });

  it('is waited for, said once, and taken as soon as the holder lets go', async () => {
    const dir = newDir();
    const held = await lockDataDir(dir, method);
    const told: DataDirInUseError[] = [];
    let got = false;
    const waiting = waitForDataDirLock(dir, method, { pollMs: 50, onWait: (e) => told.push(e) }).then((l) => {
      got = true;
      return l;
    });
    await sleep(400);
    expect(got).toBe(false);
    expect(told).toHaveLength(1);
    expect(told[0]!.holder).toBe(process.pid);
    expect(told[0]!.message).toMatch(/is in use by this process \(pid \d+\)/);
    await held.release();
    const lock = await waiting;
    expect(await dataDirHolder(dir, method)).toBe(process.pid);
    await lock.release();
  });

  it('stops waiting when asked to', async () => {
    const dir = newDir();
    const held = await lockDataDir(dir, method);
    const stop = new AbortController();
    const waiting = waitForDataDirLock(dir, method, { pollMs: 50, signal: stop.signal });
    await sleep(150);
    stop.abort();
    await expect(waiting).rejects.toThrow();
    await held.release();
  });
});
