/**
 * The start lock: one holder at a time per HARNESS_HOME, waiters get it when the holder lets
 * go, and a holder that dies without letting go (kill -9) does not block anyone — with the
 * abstract socket (Linux) and with the lock file used elsewhere.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireStartLock, startLockFile, startLockName } from '../../client/start-lock';

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function home(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-lock-'));
  dirs.push(dir);
  return dir;
}

/** A pid that surely names no process: a child that has exited and been reaped. */
async function deadPid(): Promise<number> {
  const child = spawn('true');
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

describe.each(['abstract', 'file'] as const)('the start lock (%s)', (mechanism) => {
  it('is held by one process at a time and passes to a waiter on release', async () => {
    const h = home();
    const first = await acquireStartLock(h, { mechanism });
    let notified = false;
    let secondHeld = false;
    const second = acquireStartLock(h, { mechanism, noticeAfterMs: 0, onWait: () => (notified = true) }).then((l) => {
      secondHeld = true;
      return l;
    });
    await sleep(500);
    expect(secondHeld).toBe(false);
    expect(notified).toBe(true);
    await first.release();
    const lock = await second;
    expect(secondHeld).toBe(true);
    await lock.release();
  });

  it('gives up with a one-line error when the holder keeps it too long', async () => {
    const h = home();
    const first = await acquireStartLock(h, { mechanism });
    await expect(acquireStartLock(h, { mechanism, timeoutMs: 300 })).rejects.toThrow(/another harness process/);
    await first.release();
  });
});

describe('a holder that dies without releasing', () => {
  it('frees the abstract-socket lock (the kernel closes it)', async () => {
    const h = home();
    const name = startLockName(h);
    const holder = spawn(process.execPath, ['-e', `require('node:net').createServer().listen({ path: ${JSON.stringify(name)} }, () => console.log('held'))`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(holder);
    await new Promise<void>((resolve) => holder.stdout!.once('data', () => resolve()));
    let held = false;
    const waiting = acquireStartLock(h, { mechanism: 'abstract' }).then((l) => {
      held = true;
      return l;
    });
    await sleep(300);
    expect(held).toBe(false);
    holder.kill('SIGKILL');
    const lock = await waiting;
    await lock.release();
  });

  it('leaves a lock file that the next process takes over', async () => {
    const h = home();
    writeFileSync(startLockFile(h), `${await deadPid()}\n`);
    const lock = await acquireStartLock(h, { mechanism: 'file', timeoutMs: 5_000 });
    await lock.release();
  });
});
