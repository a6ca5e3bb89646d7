/**
 * How much disk a session workspace uses, for the workspace budget (a session must not fill
 * the host disk). Allocated blocks, not apparent sizes, so a sparse file counts what it really
 * takes. Symbolic links are never followed; the walk is bounded so a tree of millions of files
 * costs a bounded amount of time, and a tree that large is over budget anyway.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';

/** Default budget of one workspace: 1 GiB (HARNESS_WORKSPACE_MAX_BYTES on the worker changes it). */
export const DEFAULT_WORKSPACE_MAX_BYTES = 1024 ** 3;

/** Entries visited before the walk stops and reports an incomplete (lower-bound) count. */
export const MAX_USAGE_ENTRIES = 200_000;

/** What a walk found; `complete` is false when it stopped at the entry cap. */
export interface WorkspaceUsage {
  bytes: number;
  entries: number;
  complete: boolean;
}

/** Sums the allocated bytes under `root` (0 when it does not exist). */
export async function workspaceUsage(root: string, maxEntries = MAX_USAGE_ENTRIES): Promise<WorkspaceUsage> {
  const usage: WorkspaceUsage = { bytes: 0, entries: 0, complete: true };
  const queue = [root];
  while (queue.length > 0) {
    const dir = queue.pop()!;
    const names = await fs.readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (usage.entries >= maxEntries) {
        usage.complete = false;
        return usage;
      }
      usage.entries++;
      const full = path.join(dir, name);
      const st = await fs.lstat(full).catch(() => undefined);
      if (!st) continue;
      usage.bytes += st.blocks * 512;
      if (st.isDirectory()) queue.push(full);
    }
  }
  return usage;
}

/** The budget from the worker's environment, or the default. */
export function workspaceBudget(env: Record<string, string | undefined>): number {
  const n = Number(env.HARNESS_WORKSPACE_MAX_BYTES);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_WORKSPACE_MAX_BYTES;
}
