/**
 * Workspace snapshots (what `harness rerun` and `fork` start from): a workspace of text, binary,
 * executable files and an empty folder comes back byte for byte in another session's workspace;
 * links, special files and files over the bounds are left out and named; unchanged content is
 * stored once however many snapshots see it; a missing workspace stores nothing.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InMemoryMessageStore } from '../../activities/store/message-store';
import { restoreSnapshot, SNAPSHOT_LIMITS, takeSnapshot } from '../../activities/workspace-snapshot';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(os.tmpdir(), 'harness-snapshot-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('workspace snapshots', () => {
  it('restores text, binary and executable files and empty folders exactly; leaves out links, FIFOs and big files, naming them', async () => {
    const store = new InMemoryMessageStore();
    const ws = tmp();
    mkdirSync(path.join(ws, 'src', 'deep'), { recursive: true });
    mkdirSync(path.join(ws, 'empty'));
    writeFileSync(path.join(ws, 'notes.txt'), 'héllo\n');
    writeFileSync(path.join(ws, 'src', 'deep', 'logo.bin'), Buffer.from([0x89, 0x50, 0x00, 0xff, 0xfe, 0xc3]));
    writeFileSync(path.join(ws, 'run.sh'), '#!/bin/sh\necho hi\n');
    chmodSync(path.join(ws, 'run.sh'), 0o755);
    writeFileSync(path.join(ws, 'big.dat'), Buffer.alloc(SNAPSHOT_LIMITS.fileBytes + 1, 1));
    symlinkSync('/etc/passwd', path.join(ws, 'link'));
    execFileSync('mkfifo', [path.join(ws, 'pipe')]);

    const snap = await takeSnapshot(ws, 's1', async () => store);
    expect(snap).toMatchObject({ files: 3, bytes: 6 + 6 + 19, leftCount: 3 });
    expect(snap.left).toEqual(['big.dat (over 2 MiB)', 'link (a symbolic link)', 'pipe (not a regular file)']);

    const into = path.join(tmp(), 'fork');
    const r = await restoreSnapshot(into, 's1', snap, async () => store);
    expect(r.files).toBe(3);
    expect(r.problems).toEqual(snap.left!.map((l) => `${l}: not in the snapshot of the turn's start`));
    expect(readFileSync(path.join(into, 'notes.txt'), 'utf8')).toBe('héllo\n');
    expect(readFileSync(path.join(into, 'src', 'deep', 'logo.bin'))).toEqual(Buffer.from([0x89, 0x50, 0x00, 0xff, 0xfe, 0xc3]));
    expect(statSync(path.join(into, 'run.sh')).mode & 0o777).toBe(0o755);
    expect(statSync(path.join(into, 'notes.txt')).mode & 0o777).toBe(0o644);
    expect(statSync(path.join(into, 'empty')).isDirectory()).toBe(true);
    for (const gone of ['big.dat', 'link', 'pipe']) expect(existsSync(path.join(into, gone))).toBe(false);
  });

  it('stores unchanged content once: a second snapshot of the same tree has the same manifest', async () => {
    const store = new InMemoryMessageStore();
    const ws = tmp();
    writeFileSync(path.join(ws, 'a.txt'), 'same');
    writeFileSync(path.join(ws, 'b.txt'), 'same');
    const first = await takeSnapshot(ws, 's2', async () => store);
    const second = await takeSnapshot(ws, 's2', async () => store);
    expect(second.manifest).toBe(first.manifest);
    // Two files of the same content and the manifest: two bodies.
    expect((await store.getBlobs('s2', [first.manifest!])).size).toBe(1);
    const manifest = JSON.parse((await store.getBlobs('s2', [first.manifest!])).get(first.manifest!)!) as { files: { hash: string }[] };
    expect(new Set(manifest.files.map((f) => f.hash)).size).toBe(1);
  });

  it('a missing or empty workspace stores nothing and restores to an empty one', async () => {
    const store = new InMemoryMessageStore();
    expect(await takeSnapshot(path.join(tmp(), 'never-made'), 's3', async () => store)).toEqual({ files: 0, bytes: 0 });
    expect(await takeSnapshot(tmp(), 's3', async () => store)).toEqual({ files: 0, bytes: 0 });
    const into = path.join(tmp(), 'fork');
    expect(await restoreSnapshot(into, 's3', { files: 0, bytes: 0 }, async () => store)).toEqual({ files: 0, problems: [] });
  });

  it('a snapshot whose session was purged is a problem to report, not a crash', async () => {
    const store = new InMemoryMessageStore();
    const ws = tmp();
    writeFileSync(path.join(ws, 'a.txt'), 'x');
    const snap = await takeSnapshot(ws, 's4', async () => store);
    await store.purge('s4');
    const r = await restoreSnapshot(path.join(tmp(), 'fork'), 's4', snap, async () => store);
    expect(r).toEqual({ files: 0, problems: ["the snapshot of the turn's start is missing from the store of s4 (was it purged?)"] });
  });
});
