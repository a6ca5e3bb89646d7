import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { workspaceBudget, workspaceUsage } from '../../../activities/tools/workspace-usage';

const dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'harness-usage-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('workspaceUsage', () => {
  it('sums allocated bytes of files in nested folders', async () => {
    const ws = temp();
    mkdirSync(path.join(ws, 'a', 'b'), { recursive: true });
    writeFileSync(path.join(ws, 'a', 'b', 'big.bin'), Buffer.alloc(256 * 1024, 1));
    const u = await workspaceUsage(ws);
    expect(u.complete).toBe(true);
    expect(u.entries).toBe(3);
    expect(u.bytes).toBeGreaterThanOrEqual(256 * 1024);
  });

  it('never follows a symbolic link, so nothing outside the workspace is counted (or revealed by the count)', async () => {
    const outside = temp();
    writeFileSync(path.join(outside, 'huge.bin'), Buffer.alloc(2 * 1024 * 1024, 1));
    const ws = temp();
    symlinkSync(outside, path.join(ws, 'link-to-outside'));
    const u = await workspaceUsage(ws);
    expect(u.bytes).toBeLessThan(64 * 1024);
  });

  it('stops at the entry cap and says the count is a lower bound', async () => {
    const ws = temp();
    for (let i = 0; i < 30; i++) writeFileSync(path.join(ws, `f${i}`), 'x');
    expect(await workspaceUsage(ws, 10)).toMatchObject({ complete: false });
    expect(await workspaceUsage(path.join(ws, 'missing'))).toEqual({ bytes: 0, entries: 0, complete: true });
  });

  it('reads the budget from HARNESS_WORKSPACE_MAX_BYTES, 1 GiB by default', () => {
    expect(workspaceBudget({})).toBe(1024 ** 3);
    expect(workspaceBudget({ HARNESS_WORKSPACE_MAX_BYTES: '5000' })).toBe(5000);
    expect(workspaceBudget({ HARNESS_WORKSPACE_MAX_BYTES: 'lots' })).toBe(1024 ** 3);
  });
});
