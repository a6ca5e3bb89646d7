/**
 * Workspace ownership for a root worker. Files the host tools write belong to root, so the
 * sandbox user (uid 1000) could read but not change them; this hands them over.
 * The container controls the tree and may swap a folder for a symlink at any moment, so the
 * walk never resolves a path twice: each folder is opened once (O_NOFOLLOW) and its entries
 * are reached through /proc/self/fd/<fd>/<name>, which cannot be redirected (openat emulation).
 */
import { constants } from 'node:fs';
import * as fs from 'node:fs/promises';

const MAX_DEPTH = 64;

/** True when handing files over is possible and needed: a root process on Linux. */
export function canAdopt(): boolean {
  return process.platform === 'linux' && process.getuid?.() === 0;
}

/**
 * Chowns (without following symlinks) every entry under `root` not owned by uid:gid, up to
 * maxEntries entries visited; returns the number changed. No-op unless canAdopt().
 */
export async function adoptTree(root: string, uid: number, gid: number, maxEntries = 10_000): Promise<number> {
  if (!canAdopt()) return 0;
  const budget = { left: maxEntries, changed: 0 };
  const dir = await openDir(root);
  if (!dir) return 0;
  await walk(dir, uid, gid, budget, 0);
  return budget.changed;
}

async function openDir(p: string): Promise<fs.FileHandle | undefined> {
  // O_NOFOLLOW refuses a symlink; O_DIRECTORY refuses anything that is not a folder.
  return fs.open(p, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW).catch(() => undefined);
}

async function walk(dir: fs.FileHandle, uid: number, gid: number, budget: { left: number; changed: number }, depth: number): Promise<void> {
  try {
    const st = await dir.stat();
    if (st.uid !== uid || st.gid !== gid) {
      await dir.chown(uid, gid);
      budget.changed++;
    }
    const base = `/proc/self/fd/${dir.fd}`;
    const names = await fs.readdir(base).catch(() => [] as string[]);
    for (const name of names) {
      if (budget.left-- <= 0) return;
      const entry = `${base}/${name}`;
      const est = await fs.lstat(entry).catch(() => undefined);
      if (!est) continue;
      if (est.isDirectory() && depth < MAX_DEPTH) {
        const sub = await openDir(entry);
        if (sub) await walk(sub, uid, gid, budget, depth + 1);
      } else if (est.uid !== uid || est.gid !== gid) {
        // lchown: the final component is never followed; the folder part is the pinned fd.
        await fs.lchown(entry, uid, gid).catch(() => undefined);
        budget.changed++;
      }
    }
  } finally {
    await dir.close();
  }
}
