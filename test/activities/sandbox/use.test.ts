/**
 * activities/sandbox/use.ts on its own (no Docker): a stop and a call never overlap, whichever
 * comes first, and leases of processes that are gone do not count.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { beginStop, lastUsed, liveLeases, withLease } from '../../../activities/sandbox/use';

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'use-test-'));
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

describe('sandbox use', () => {
  it('a stop is refused while a call holds a lease; a call that comes during a stop waits for its end', async () => {
    let release!: () => void;
    const call = withLease(home, 's-1', () => new Promise<void>((resolve) => (release = resolve)));
    await sleep(0);
    expect(liveLeases(home, 's-1')).toBe(1);
    expect(beginStop(home, 's-1')).toBeUndefined();
    release();
    await call;
    expect(liveLeases(home, 's-1')).toBe(0);

    const end = beginStop(home, 's-1')!;
    expect(end).toBeTypeOf('function');
    // A second stopper finds one under way.
    expect(beginStop(home, 's-1')).toBeUndefined();
    const order: string[] = [];
    const waiting = withLease(home, 's-1', async () => void order.push('call'));
    await sleep(300);
    order.push('stop over');
    end();
    await waiting;
    expect(order).toEqual(['stop over', 'call']);
  });

  it('leases of a process that is gone, or our pid on a lease we do not hold, are stale; the folder dates the last use', async () => {
    const dir = path.join(home, 'sandbox-use', 's-2');
    fs.mkdirSync(dir, { recursive: true });
    // pid 2^22 + 1 is above Linux's pid_max: never a live process.
    fs.writeFileSync(path.join(dir, `${2 ** 22 + 1}.0`), '');
    fs.writeFileSync(path.join(dir, `${process.pid}.999999`), '');
    expect(liveLeases(home, 's-2')).toBe(0);
    expect(fs.readdirSync(dir)).toEqual([]);
    const before = lastUsed(home, 's-2')!;
    await sleep(20);
    await withLease(home, 's-2', async () => undefined);
    expect(lastUsed(home, 's-2')!).toBeGreaterThan(before);
  });
});
