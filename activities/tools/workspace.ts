/**
 * Session workspaces: every file tool is confined to `<home>/workspaces/<sessionId>`.
 * The model chooses the paths, so each one is checked lexically and then physically
 * (symlinks resolved) before any file is touched.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { ErrorType } from '../../common/errors';

/** A path or session id that must not be used; carries the tool error type to report. */
export class WorkspaceError extends Error {
  override name = 'WorkspaceError';

  constructor(
    readonly errorType: ErrorType,
    message: string,
  ) {
    super(message);
  }
}

/** Session ids become folder names, so only a conservative character set is allowed. */
export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

// Same bound as the kernel's symlink limit; only reached while following dangling links by hand.
const MAX_LINK_HOPS = 40;

/** The workspace folder of a session: `<home>/workspaces/<sessionId>`; throws on a malformed id. */
export function sessionWorkspace(home: string, sessionId: string): string {
  if (typeof sessionId !== 'string' || !SESSION_ID.test(sessionId)) {
    throw new WorkspaceError('INVALID_ARGUMENTS', `invalid session id ${JSON.stringify(sessionId)}: must match ${SESSION_ID}`);
  }
  return path.join(home, 'workspaces', sessionId);
}

/** Creates the session workspace when missing (mkdir -p) and returns its path. */
export async function ensureWorkspace(home: string, sessionId: string): Promise<string> {
  const dir = sessionWorkspace(home, sessionId);
  await fs.mkdir(dir, { recursive: true });
  return dir;
}

/**
 * Resolves a model-supplied relative path to a physical path inside `root` (which must exist).
 * Throws WorkspaceError(PATH_OUTSIDE_WORKSPACE) for absolute paths, `..` escapes and symlink escapes.
 * Callers must use the returned path: it is the one that was checked (symlinks already resolved).
 */
export async function resolveInWorkspace(root: string, userPath: string): Promise<string> {
  const shown = JSON.stringify(userPath);
  if (userPath.includes('\0')) {
    throw new WorkspaceError('INVALID_ARGUMENTS', `path ${shown} contains a NUL byte`);
  }
  if (path.isAbsolute(userPath)) {
    throw new WorkspaceError('PATH_OUTSIDE_WORKSPACE', `path ${shown} is absolute; only paths relative to the workspace are allowed`);
  }
  // Compare physical with physical: the root itself may sit behind a symlink (e.g. /tmp on macOS).
  const realRoot = await fs.realpath(root);
  const lexical = path.resolve(realRoot, userPath);
  if (!isInside(realRoot, lexical)) {
    throw new WorkspaceError('PATH_OUTSIDE_WORKSPACE', `path ${shown} is outside the workspace`);
  }
  const physical = await resolvePhysical(lexical, 0);
  if (!isInside(realRoot, physical)) {
    throw new WorkspaceError('PATH_OUTSIDE_WORKSPACE', `path ${shown} leads outside the workspace through a symbolic link`);
  }
  return physical;
}

/** True when `p` is `realRoot` or below it; the trailing separator stops `/ws` matching `/ws-other`. */
function isInside(realRoot: string, p: string): boolean {
  const prefix = realRoot.endsWith(path.sep) ? realRoot : realRoot + path.sep;
  return p === realRoot || p.startsWith(prefix);
}

/**
 * realpath for paths whose tail may not exist yet: realpath of the deepest existing ancestor,
 * plus the missing components. A dangling symlink on the way is followed by hand, because
 * creating a file through it would otherwise land wherever it points.
 */
async function resolvePhysical(p: string, hops: number): Promise<string> {
  try {
    return await fs.realpath(p);
  } catch (err) {
    if (errnoCode(err) === 'ELOOP') throw new WorkspaceError('EXECUTION_ERROR', 'too many levels of symbolic links');
    if (!isMissing(err)) throw err;
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  const realParent = await resolvePhysical(parent, hops);
  const candidate = path.join(realParent, path.basename(p));
  const stat = await fs.lstat(candidate).catch(() => undefined);
  if (!stat?.isSymbolicLink()) return candidate;
  if (hops >= MAX_LINK_HOPS) throw new WorkspaceError('EXECUTION_ERROR', 'too many levels of symbolic links');
  const target = await fs.readlink(candidate);
  return resolvePhysical(path.resolve(realParent, target), hops + 1);
}

function isMissing(err: unknown): boolean {
  const code = errnoCode(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** The errno code of a Node fs error, if it is one. */
export function errnoCode(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
