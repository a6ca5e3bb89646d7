/**
 * read_file, write_file and list_files, confined to the session workspace.
 * Every path is walked through held folder descriptors (fd-walk.ts), never resolved and then
 * reopened, because the sandbox may change the tree at any moment.
 * Failures come back as ToolResults the model can act on; only non-fs bugs throw.
 */
import * as fs from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { constants } from 'node:fs';
import * as path from 'node:path';
import type { z } from 'zod';
import type { listFilesTool, readFileTool, writeFileTool } from '../../deterministic/builtin-tools';
import { toolError, toolOk } from '../../deterministic/errors';
import type { ToolResult } from '../../deterministic/types';
import { alreadyAppended, recordAppend, type AppliedRef } from './applied-writes';
import { entryPath, locate, openFolderBelow } from './fd-walk';
import { errnoCode, WorkspaceError } from './workspace';
import { DEFAULT_WORKSPACE_MAX_BYTES } from './workspace-usage';
import { noteGrowth, overBudget } from './write-budget';

/** Validated arguments of read_file. */
type ReadFileArgs = z.infer<typeof readFileTool.parameters>;
/** Validated arguments of write_file. */
type WriteFileArgs = z.infer<typeof writeFileTool.parameters>;
/** Validated arguments of list_files. */
type ListFilesArgs = z.infer<typeof listFilesTool.parameters>;

/** One list_files entry; `size` is the byte size of files and 0 for folders and symlinks. */
interface FileEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink';
  size: number;
}

/** Default read cap, matching the read_file description. */
const DEFAULT_READ_MAX_BYTES = 100_000;
/** Upper bound on list_files entries, so a huge tree cannot flood the context. */
export const MAX_LIST_ENTRIES = 1000;

const OUTSIDE_SUGGESTION = 'use a path relative to the workspace';

/** Reads a text file (at most max_bytes, cut on a UTF-8 character boundary). */
export async function readFile(root: string, args: ReadFileArgs): Promise<ToolResult> {
  const shown = displayPath(args.path);
  const maxBytes = args.max_bytes ?? DEFAULT_READ_MAX_BYTES;
  try {
    const handle = await openInWorkspace(root, args.path, constants.O_RDONLY);
    try {
      // Judged on the opened handle, so nothing can be swapped in between.
      const stat = await handle.stat();
      if (stat.isDirectory()) {
        return toolError('EXECUTION_ERROR', `"${shown}" is a folder, not a file`, { suggestion: 'use list_files to see what it contains' });
      }
      if (!stat.isFile()) return notRegular(shown);
      // One byte past the cap tells "exactly max_bytes" apart from "more than max_bytes".
      const buffer = Buffer.alloc(maxBytes + 1);
      let got = 0;
      while (got < buffer.length) {
        const { bytesRead } = await handle.read(buffer, got, buffer.length - got, got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      const kept = utf8Prefix(buffer.subarray(0, got), maxBytes);
      const truncated = got > maxBytes;
      const result: Record<string, unknown> = { path: shown, content: kept.toString('utf8'), bytes: kept.length, truncated };
      if (truncated) result.total_bytes = stat.size;
      return toolOk(result);
    } finally {
      await handle.close();
    }
  } catch (err) {
    return failure(err, shown, 'file');
  }
}

/** How writeFile is bounded and made retry-safe. */
interface WriteOptions {
  /** Budget of the whole workspace in bytes (default DEFAULT_WORKSPACE_MAX_BYTES). */
  maxBytes?: number;
  /** This call's applied-writes record: makes an append exactly-once when the activity is retried. */
  applied?: AppliedRef;
}

/** Writes or appends a text file, creating parent folders; refuses to take the workspace over its budget. */
export async function writeFile(root: string, args: WriteFileArgs, opts: WriteOptions = {}): Promise<ToolResult> {
  const shown = displayPath(args.path);
  const data = Buffer.from(args.content, 'utf8');
  const done = toolOk({ path: shown, bytes_written: data.length });
  // Overwrites are idempotent by nature; only a non-empty append needs the record.
  const once = args.append && data.length > 0 ? opts.applied : undefined;
  // Read access too when a retry must look at what an earlier attempt appended.
  const flags = (once ? constants.O_RDWR : constants.O_WRONLY) | (args.append ? constants.O_APPEND : 0);
  try {
    const loc = await locate(root, args.path, { createFolders: true });
    let handle: FileHandle | undefined;
    try {
      // Opened without O_CREAT first, so that a write refused for the budget creates no file.
      handle = await loc.open(flags).catch((err: unknown) => {
        if (errnoCode(err) === 'ENOENT') return undefined;
        throw err;
      });
      const before = handle ? await handle.stat() : undefined;
      if (before && !before.isFile()) return notRegular(shown);
      if (once && handle && (await alreadyAppended(once, shown, data, handle))) return done;
      const growth = data.length - (args.append ? 0 : (before?.size ?? 0));
      const full = await overBudget(root, growth, opts.maxBytes ?? DEFAULT_WORKSPACE_MAX_BYTES, shown);
      if (full) return full;
      handle ??= await loc.open(flags | constants.O_CREAT, 0o644);
      // Checked again: something else may have been created under that name meanwhile.
      const stat = await handle.stat();
      if (!stat.isFile()) return notRegular(shown);
      // Written before appending: a retry after a crash past this point finds where to look.
      if (once) await recordAppend(once, shown, data, stat.size);
      // Truncated only now, after the checks, through the handle that was checked.
      if (!args.append) await handle.truncate(0);
      await handle.writeFile(data);
      noteGrowth(root, growth);
      return done;
    } finally {
      await handle?.close();
      await loc.close();
    }
  } catch (err) {
    return failure(err, shown, 'file');
  }
}

/** Lists a folder (breadth-first when recursive, never descending into symlinks), sorted by path. */
export async function listFiles(root: string, args: ListFilesArgs): Promise<ToolResult> {
  const requested = args.path ?? '.';
  const shown = displayPath(requested);
  try {
    const base = await openInWorkspace(root, requested, constants.O_RDONLY);
    try {
      const stat = await base.stat();
      if (!stat.isDirectory()) {
        if (!stat.isFile()) return toolError('EXECUTION_ERROR', `"${shown}" is not a folder`);
        return toolError('EXECUTION_ERROR', `"${shown}" is a file, not a folder`, { suggestion: 'use read_file to read it' });
      }
      const entries: FileEntry[] = [];
      let truncated = false;
      // Breadth-first so that, when capped, the shallow (most informative) entries are the ones kept.
      // Folders are queued as names below the listed one and reopened from its descriptor without following links.
      const queue: string[][] = [[]];
      while (queue.length > 0 && !truncated) {
        const parts = queue.shift()!;
        const top = parts.length === 0;
        // A sub-folder we cannot open or read (gone, or a symlink by now) is skipped rather than failing the whole listing.
        const dir = top ? base : await openFolderBelow(base, parts).catch(() => undefined);
        if (!dir) continue;
        try {
          const reading = fs.readdir(entryPath(dir, '.'), { withFileTypes: true });
          const dirents = top ? await reading : await reading.catch(() => []);
          dirents.sort((a, b) => compare(a.name, b.name));
          for (const d of dirents) {
            if (entries.length >= MAX_LIST_ENTRIES) {
              truncated = true;
              break;
            }
            const relPath = [...parts, d.name].join('/');
            // Dirent types come from lstat semantics: a symlink to a folder is a 'symlink', never walked.
            const type = d.isSymbolicLink() ? 'symlink' : d.isDirectory() ? 'dir' : 'file';
            const size = type === 'file' ? ((await fs.lstat(entryPath(dir, d.name)).catch(() => undefined))?.size ?? 0) : 0;
            entries.push({ path: shown === '.' ? relPath : `${shown}/${relPath}`, type, size });
            if (args.recursive && type === 'dir') queue.push([...parts, d.name]);
          }
        } finally {
          if (dir !== base) await dir.close();
        }
      }
      entries.sort((a, b) => compare(a.path, b.path));
      return toolOk({ path: shown, entries, truncated });
    } finally {
      await base.close();
    }
  } catch (err) {
    return failure(err, shown, 'folder');
  }
}

/** Walks to a path and opens its final entry (without following a symlink there either). */
async function openInWorkspace(root: string, userPath: string, flags: number): Promise<FileHandle> {
  const loc = await locate(root, userPath);
  try {
    return await loc.open(flags);
  } finally {
    await loc.close();
  }
}

function notRegular(shown: string): ToolResult {
  return toolError('EXECUTION_ERROR', `"${shown}" is not a regular file`, { suggestion: 'only regular files can be read or written' });
}

/** The longest prefix of `buf` of at most `maxBytes` bytes that does not split a UTF-8 character. */
export function utf8Prefix(buf: Buffer, maxBytes: number): Buffer {
  if (buf.length <= maxBytes) return buf;
  let end = maxBytes;
  // buf[end] is the first byte dropped; if it is a continuation byte (10xxxxxx), the cut splits a character.
  while (end > 0 && maxBytes - end < 4 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end);
}

/** The path as the model should see it: normalised, relative, no trailing slash. */
function displayPath(userPath: string): string {
  return path.normalize(userPath).replace(/(.)\/+$/, '$1');
}

// Code-unit order: deterministic across locales, unlike localeCompare.
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Maps workspace and fs errors to tool results; anything else is a bug and is rethrown. */
function failure(err: unknown, shown: string, kind: 'file' | 'folder'): ToolResult {
  if (err instanceof WorkspaceError) {
    const suggestion = err.errorType === 'PATH_OUTSIDE_WORKSPACE' ? OUTSIDE_SUGGESTION : undefined;
    return toolError(err.errorType, err.message, { suggestion });
  }
  const code = errnoCode(err);
  switch (code) {
    case 'ENOENT':
      return toolError('FILE_NOT_FOUND', `${kind} "${shown}" does not exist`, { suggestion: 'use list_files to see what exists' });
    case 'ENOTDIR':
      return toolError('EXECUTION_ERROR', `part of the path "${shown}" is a file, not a folder`, { suggestion: 'use list_files to see what exists' });
    case 'EISDIR':
      return toolError('EXECUTION_ERROR', `"${shown}" is a folder, not a file`);
    case 'ELOOP':
      // Only O_NOFOLLOW produces this here: the final entry became a symlink after the walk looked at it.
      return toolError('PATH_OUTSIDE_WORKSPACE', `"${shown}" is a symbolic link; refusing to follow it`, { suggestion: OUTSIDE_SUGGESTION });
    case 'ENXIO':
      // A FIFO without a reader (opened non-blocking for writing) or a socket.
      return notRegular(shown);
    case 'EACCES':
    case 'EPERM':
      return toolError('EXECUTION_ERROR', `permission denied for "${shown}"`);
    case undefined:
      throw err;
    default:
      return toolError('EXECUTION_ERROR', `"${shown}": ${(err as Error).message}`);
  }
}
