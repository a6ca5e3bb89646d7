/**
 * Where the harness keeps a user's state when HARNESS_HOME does not say: outside the working
 * tree, in the user's own state folder, one folder per project (the working directory's real
 * path). A checkout can ship any file it likes, so state must never be read from inside it by
 * default: a `.harness/` folder a repository carries is someone else's (machine/home-mark.ts).
 *
 * Pure path arithmetic (one realpath of the working directory): machine/pids.ts computes the same
 * default for another process from its working directory and environment.
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Reads a variable from a process environment or /proc's copy of another process's. */
type EnvLookup = (name: string) => string | undefined;

export function lookupIn(env: NodeJS.ProcessEnv): EnvLookup {
  return (name) => env[name];
}

/** `$XDG_STATE_HOME/harness`, else `~/.local/state/harness` (an XDG value that is not absolute is ignored, as the spec says). */
export function harnessStateDir(env: EnvLookup): string {
  const xdg = env('XDG_STATE_HOME');
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'harness');
  return path.join(env('HOME') || os.homedir(), '.local', 'state', 'harness');
}

/** The real path of a folder, or its absolute path when it cannot be resolved (gone, no permission). */
export function realOrAbsolute(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

/**
 * The default HARNESS_HOME of a project: `<state dir>/projects/<basename>-<12 hex of sha256 of
 * the working directory's real path>`, so two checkouts with one name never share state and the
 * same checkout reached through a symlink does.
 */
export function defaultHome(cwd: string, env: EnvLookup): string {
  const real = realOrAbsolute(cwd);
  const base = (path.basename(real) || 'root').replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_').slice(0, 40);
  const hash = createHash('sha256').update(real).digest('hex').slice(0, 12);
  return path.join(harnessStateDir(env), 'projects', `${base}-${hash}`);
}

/** HARNESS_HOME as a process with this environment and working directory resolves it (absolute). */
export function homeOf(env: EnvLookup, cwd: string): string {
  const set = env('HARNESS_HOME');
  return set ? path.resolve(cwd, set) : defaultHome(cwd, env);
}
