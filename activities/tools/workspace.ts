/**
 * Session workspaces: every file tool is confined to `<home>/workspaces/<sessionId>`.
 * The model chooses the paths, so each one is first checked lexically here; fd-walk.ts then
 * opens it component by component without ever letting the kernel follow a symbolic link.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { ErrorType } from '../../deterministic/errors';

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
 * The components of a model-supplied path relative to the workspace root, `[]` for the root.
 * Throws WorkspaceError: PATH_OUTSIDE_WORKSPACE for absolute paths and `..` escapes (decided
 * on the text alone, before anything is opened), INVALID_ARGUMENTS for a NUL byte.
 */
export function workspaceParts(userPath: string): string[] {
  const shown = JSON.stringify(userPath);
  if (userPath.includes('\0')) {
    throw new WorkspaceError('INVALID_ARGUMENTS', `path ${shown} contains a NUL byte`);
  }
  if (path.posix.isAbsolute(userPath)) {
    throw new WorkspaceError('PATH_OUTSIDE_WORKSPACE', `path ${shown} is absolute; only paths relative to the workspace are allowed`);
  }
  // `a/../b` is fine: after normalisation only an escape can still contain `..`.
  const parts = path.posix.normalize(userPath).split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) {
    throw new WorkspaceError('PATH_OUTSIDE_WORKSPACE', `path ${shown} is outside the workspace`);
  }
  return parts;
}

/** The errno code of a Node fs error, if it is one. */
export function errnoCode(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
