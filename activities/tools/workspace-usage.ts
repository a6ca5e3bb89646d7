/**
 * How much disk a session workspace uses, for the workspace budget (a session must not fill
 * the host disk). Allocated blocks, not apparent sizes, so a sparse file counts what it really
 * takes. The sandbox controls the tree and may swap a folder for a symlink at any moment, so
 * the walk holds folder descriptors and never follows a link (the fd-walk technique): it counts
 * only what is inside. Bounded, so a tree of millions of files costs a bounded time (and is
 * over any budget anyway); entries of a folder are examined in parallel.
 */
import * as fs from 'node:fs/promises';
import { entryPath, openFolder } from './fd-walk';

/** Default budget of one workspace: 1 GiB (HARNESS_WORKSPACE_MAX_BYTES on the worker changes it). */
export const DEFAULT_WORKSPACE_MAX_BYTES = 1024 ** 3;

/** Entries visited before the walk stops and reports an incomplete (lower-bound) count. */
const MAX_USAGE_ENTRIES = 200_000;

// Folders deeper than this are not descended into (descriptors held = depth).
const MAX_DEPTH = 64;
// lstat calls in flight at once within one folder.
const PARALLEL = 64;

/** What a walk found; `complete` is false when it stopped at the entry cap. */
interface WorkspaceUsage {
  bytes: number;
  entries: number;
  complete: boolean;
}

/** Sums the allocated bytes under `root` (0 when it does not exist). */
export async function workspaceUsage(root: string, maxEntries = MAX_USAGE_ENTRIES): Promise<WorkspaceUsage> {
  const usage: WorkspaceUsage = { bytes: 0, entries: 0, complete: true };
  const dir = await openFolder(root).catch(() => undefined);
  if (!dir) return usage;
  await walk(dir, usage, maxEntries, 0);
  return usage;
}

async function walk(dir: fs.FileHandle, usage: WorkspaceUsage, maxEntries: number, depth: number): Promise<void> {
  try {
    const names = await fs.readdir(entryPath(dir, '.')).catch(() => [] as string[]);
    const folders: string[] = [];
    for (let i = 0; i < names.length; i += PARALLEL) {
      const batch = names.slice(i, i + PARALLEL);
      if (usage.entries + batch.length > maxEntries) {
        usage.complete = false;
        return;
      }
      usage.entries += batch.length;
      const stats = await Promise.all(batch.map((name) => fs.lstat(entryPath(dir, name)).catch(() => undefined)));
      stats.forEach((st, j) => {
        if (!st) return;
        usage.bytes += st.blocks * 512;
        if (st.isDirectory()) folders.push(batch[j]!);
      });
    }
    if (depth >= MAX_DEPTH) return;
    for (const name of folders) {
      // O_NOFOLLOW on the component: a folder swapped for a link since the lstat is skipped.
      const sub = await openFolder(entryPath(dir, name)).catch(() => undefined);
      if (sub) await walk(sub, usage, maxEntries, depth + 1);
      if (!usage.complete) return;
    }
  } finally {
    await dir.close();
  }
}

/** The budget from the worker's environment, or the default. */
export function workspaceBudget(env: Record<string, string | undefined>): number {
  const n = Number(env.HARNESS_WORKSPACE_MAX_BYTES);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_WORKSPACE_MAX_BYTES;
}
