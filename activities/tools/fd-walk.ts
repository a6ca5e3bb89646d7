/**
 * Race-free access to workspace paths (openat emulation; the worker runs on Linux).
 * The sandbox controls the workspace and keeps processes running between commands, so any
 * check of a path followed by an open of the same path can be raced: a folder swapped for a
 * symlink in between sends the open anywhere on the host (the worker's /proc/self/environ,
 * say). Here the kernel never follows a link below the workspace root: the root is opened
 * once, each component is opened relative to the descriptor of the folder before it through
 * /proc/self/fd/<fd>/<name> with O_NOFOLLOW, and the final open is relative to its folder's
 * descriptor too. A descriptor stays on its folder whatever is renamed later, and the
 * sandbox cannot move a folder out of its mount.
 *
 * Symbolic links that stay inside the workspace keep working: a link met on the way is read,
 * never followed, and its target is spliced into the components still to walk, relative to
 * the folders already held (as the kernel would), so every hop is walked like the rest. A
 * target that is absolute or climbs above the root is PATH_OUTSIDE_WORKSPACE.
 */
import { constants } from 'node:fs';
import * as fs from 'node:fs/promises';
import { errnoCode, WorkspaceError, workspaceParts } from './workspace';

/** Symbolic links followed by hand in one walk (the kernel's own bound). */
export const MAX_LINK_HOPS = 40;

// O_NONBLOCK: opening a FIFO must never wait for a peer, which would park a worker thread.
const NO_FOLLOW = constants.O_NOFOLLOW | constants.O_NONBLOCK;
const FOLDER = constants.O_RDONLY | constants.O_DIRECTORY | NO_FOLLOW;

/** `name` inside the folder held by `dir`, as a path that no rename or symlink can redirect. */
export function entryPath(dir: fs.FileHandle, name: string): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** Opens a folder; a symlink (or anything else) in the final component is refused. */
export function openFolder(p: string): Promise<fs.FileHandle> {
  return fs.open(p, FOLDER);
}

/** Opens the folder `parts` below `base` one component at a time, refusing symlinks. */
export async function openFolderBelow(base: fs.FileHandle, parts: readonly string[]): Promise<fs.FileHandle> {
  let current = base;
  try {
    for (const name of parts) {
      const next = await openFolder(entryPath(current, name));
      if (current !== base) await current.close();
      current = next;
    }
    return current;
  } catch (err) {
    if (current !== base) await current.close();
    throw err;
  }
}

/** An entry inside the workspace: its folder, held open, and its name there (`.` for the folder itself). */
export class Located {
  constructor(
    readonly dir: fs.FileHandle,
    readonly name: string,
  ) {}

  /** The entry as a path pinned to its folder's descriptor. */
  get path(): string {
    return entryPath(this.dir, this.name);
  }

  /** Opens the entry with `flags` plus O_NOFOLLOW|O_NONBLOCK: a symlink swapped in since the walk gives ELOOP. */
  open(flags: number, mode?: number): Promise<fs.FileHandle> {
    return fs.open(this.path, flags | NO_FOLLOW, mode);
  }

  /** Releases the folder's descriptor. */
  close(): Promise<void> {
    return this.dir.close();
  }
}

/**
 * Walks a model-supplied path from `root` and returns its final entry, which is not opened (it
 * may not exist yet). With `createFolders`, missing folders on the way are created one by one.
 * Throws WorkspaceError for paths that leave the workspace, fs errors (ENOENT, ENOTDIR…) otherwise.
 */
export async function locate(root: string, userPath: string, opts: { createFolders?: boolean } = {}): Promise<Located> {
  const todo = workspaceParts(userPath);
  const held = [await openFolder(root)];
  let hops = 0;
  const bounded = () => {
    if (++hops > MAX_LINK_HOPS) throw new WorkspaceError('EXECUTION_ERROR', 'too many levels of symbolic links');
  };
  const outside = () =>
    new WorkspaceError('PATH_OUTSIDE_WORKSPACE', `path ${JSON.stringify(userPath)} leads outside the workspace through a symbolic link`);
  const follow = (target: string) => {
    bounded();
    if (target.startsWith('/')) throw outside();
    todo.unshift(...target.split('/').filter((p) => p !== '' && p !== '.'));
  };
  try {
    for (;;) {
      const name = todo.shift();
      if (name === undefined) return new Located(held.pop()!, '.');
      if (name === '..') {
        // Only link targets bring `..` here (the model's own were settled lexically): go back
        // to the folder held before, never up from the root.
        if (held.length === 1) throw outside();
        await held.pop()!.close();
        continue;
      }
      const at = entryPath(held[held.length - 1]!, name);
      if (todo.length === 0) {
        const target = await linkTarget(at);
        if (target === undefined) return new Located(held.pop()!, name);
        follow(target);
        continue;
      }
      try {
        held.push(await openFolderCreating(at, opts.createFolders ?? false));
      } catch (err) {
        const code = errnoCode(err);
        // O_NOFOLLOW|O_DIRECTORY reports a symlink as ENOTDIR, like a file; readlink tells them apart.
        if (code !== 'ENOTDIR' && code !== 'ELOOP') throw err;
        const target = await linkTarget(at);
        if (target !== undefined) {
          follow(target);
          continue;
        }
        // Only a file explains the error for sure. A folder, a link or nothing there now means the
        // entry was swapped since the open (by the sandbox): look again, within the hop bound.
        const now = await fs.lstat(at).catch(() => undefined);
        if (now && !now.isDirectory() && !now.isSymbolicLink()) throw err;
        bounded();
        todo.unshift(name);
      }
    }
  } finally {
    for (const h of held) await h.close();
  }
}

/** Opens the folder at `at`; when it is missing and `create` is set, makes it first (whatever is there by then is opened with the same checks). */
async function openFolderCreating(at: string, create: boolean): Promise<fs.FileHandle> {
  try {
    return await openFolder(at);
  } catch (err) {
    if (!create || errnoCode(err) !== 'ENOENT') throw err;
  }
  await fs.mkdir(at).catch((err: unknown) => {
    if (errnoCode(err) !== 'EEXIST') throw err;
  });
  return openFolder(at);
}

/** The target of the symlink at `at`, or undefined when there is no symlink there. */
async function linkTarget(at: string): Promise<string | undefined> {
  try {
    return await fs.readlink(at);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'EINVAL' || code === 'ENOENT') return undefined;
    throw err;
  }
}
