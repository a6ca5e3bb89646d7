/**
 * read_file, write_file and list_files, confined to the session workspace.
 * Failures come back as ToolResults the model can act on; only non-fs bugs throw.
 */
import * as fs from 'node:fs/promises';
import { constants } from 'node:fs';
import * as path from 'node:path';
import type { z } from 'zod';
import type { listFilesTool, readFileTool, writeFileTool } from '../../common/builtin-tools';
import { toolError, toolOk } from '../../common/errors';
import type { ToolResult } from '../../common/types';
import { errnoCode, resolveInWorkspace, WorkspaceError } from './workspace';

/** Validated arguments of read_file. */
export type ReadFileArgs = z.infer<typeof readFileTool.parameters>;
/** Validated arguments of write_file. */
export type WriteFileArgs = z.infer<typeof writeFileTool.parameters>;
/** Validated arguments of list_files. */
export type ListFilesArgs = z.infer<typeof listFilesTool.parameters>;

/** One list_files entry; `size` is the byte size of files and 0 for folders and symlinks. */
export interface FileEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink';
  size: number;
}

/** Default read cap, matching the read_file description. */
export const DEFAULT_READ_MAX_BYTES = 100_000;
/** Upper bound on list_files entries, so a huge tree cannot flood the context. */
export const MAX_LIST_ENTRIES = 1000;

const OUTSIDE_SUGGESTION = 'use a path relative to the workspace';

/** Reads a text file (at most max_bytes, cut on a UTF-8 character boundary). */
export async function readFile(root: string, args: ReadFileArgs): Promise<ToolResult> {
  const shown = displayPath(args.path);
  const maxBytes = args.max_bytes ?? DEFAULT_READ_MAX_BYTES;
  try {
    const full = await resolveInWorkspace(root, args.path);
    const stat = await fs.stat(full);
    if (stat.isDirectory()) {
      return toolError('EXECUTION_ERROR', `"${shown}" is a folder, not a file`, { suggestion: 'use list_files to see what it contains' });
    }
    // Refuse FIFOs and devices: opening one could block the activity forever.
    if (!stat.isFile()) return toolError('EXECUTION_ERROR', `"${shown}" is not a regular file`);
    // O_NOFOLLOW: the path was checked with symlinks resolved; refuse one swapped in since.
    const handle = await fs.open(full, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
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

/** Writes or appends a text file, creating parent folders. */
export async function writeFile(root: string, args: WriteFileArgs): Promise<ToolResult> {
  const shown = displayPath(args.path);
  try {
    const full = await resolveInWorkspace(root, args.path);
    // Safe: every missing component below the checked ancestor is created as a plain folder.
    await fs.mkdir(path.dirname(full), { recursive: true });
    const mode = args.append ? constants.O_APPEND : constants.O_TRUNC;
    const handle = await fs.open(full, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | mode, 0o644);
    try {
      await handle.writeFile(args.content, 'utf8');
    } finally {
      await handle.close();
    }
    return toolOk({ path: shown, bytes_written: Buffer.byteLength(args.content, 'utf8') });
  } catch (err) {
    return failure(err, shown, 'file');
  }
}

/** Lists a folder (breadth-first when recursive, never descending into symlinks), sorted by path. */
export async function listFiles(root: string, args: ListFilesArgs): Promise<ToolResult> {
  const requested = args.path ?? '.';
  const shown = displayPath(requested);
  try {
    const full = await resolveInWorkspace(root, requested);
    const stat = await fs.stat(full);
    if (!stat.isDirectory()) {
      return toolError('EXECUTION_ERROR', `"${shown}" is a file, not a folder`, { suggestion: 'use read_file to read it' });
    }
    const entries: FileEntry[] = [];
    let truncated = false;
    // Breadth-first so that, when capped, the shallow (most informative) entries are the ones kept.
    const queue: Array<{ dir: string; rel: string }> = [{ dir: full, rel: '' }];
    while (queue.length > 0 && !truncated) {
      const { dir, rel } = queue.shift()!;
      // A sub-folder we cannot read is skipped rather than failing the whole listing.
      const dirents = rel === '' ? await fs.readdir(dir, { withFileTypes: true }) : await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
      dirents.sort((a, b) => compare(a.name, b.name));
      for (const d of dirents) {
        if (entries.length >= MAX_LIST_ENTRIES) {
          truncated = true;
          break;
        }
        const relPath = rel ? `${rel}/${d.name}` : d.name;
        const abs = path.join(dir, d.name);
        // Dirent types come from lstat semantics: a symlink to a folder is a 'symlink', never walked.
        const type = d.isSymbolicLink() ? 'symlink' : d.isDirectory() ? 'dir' : 'file';
        const size = type === 'file' ? ((await fs.lstat(abs).catch(() => undefined))?.size ?? 0) : 0;
        entries.push({ path: shown === '.' ? relPath : `${shown}/${relPath}`, type, size });
        if (args.recursive && type === 'dir') queue.push({ dir: abs, rel: relPath });
      }
    }
    entries.sort((a, b) => compare(a.path, b.path));
    return toolOk({ path: shown, entries, truncated });
  } catch (err) {
    return failure(err, shown, 'folder');
  }
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
      // Only O_NOFOLLOW produces this here: the final component became a symlink after the check.
      return toolError('PATH_OUTSIDE_WORKSPACE', `"${shown}" is a symbolic link; refusing to follow it`, { suggestion: OUTSIDE_SUGGESTION });
    case 'EACCES':
    case 'EPERM':
      return toolError('EXECUTION_ERROR', `permission denied for "${shown}"`);
    case undefined:
      throw err;
    default:
      return toolError('EXECUTION_ERROR', `"${shown}": ${(err as Error).message}`);
  }
}
