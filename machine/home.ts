/**
 * The HARNESS_HOME a command or a worker uses: where it is (HARNESS_HOME, else the project's
 * folder in the user's state folder: machine/state-dir.ts), checked to be this user's before
 * anything in it is read (machine/home-mark.ts), and a line about a `./.harness` it ignored.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { claimHome, homeState } from './home-mark';
import { homeOf, lookupIn, realOrAbsolute } from './state-dir';

/** A home ready to use, and what was ignored on the way (one line each, for the person). */
interface OpenedHome {
  home: string;
  notices: string[];
}

/**
 * Resolves and claims the home: created and marked when missing or empty, used when it carries
 * this user's mark, refused (UserError) otherwise. The default home is made private (0700).
 */
export function openHome(env: NodeJS.ProcessEnv = process.env, cwd: string = process.cwd()): OpenedHome {
  const home = homeOf(lookupIn(env), cwd);
  const explicit = Boolean(env.HARNESS_HOME);
  claimHome(home, env, explicit ? undefined : 0o700);
  const stray = explicit ? undefined : strayProjectHome(cwd, home, env);
  return { home, notices: stray ? [stray] : [] };
}

/**
 * `./.harness` in the working directory, the default home of harnesses before marks: never used
 * unless HARNESS_HOME names it. A checkout may ship one (a planted session, memories, pid files),
 * and the user's own from an older harness looks just the same, so it is named once per command
 * with the way to keep it.
 */
function strayProjectHome(cwd: string, home: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const local = path.join(cwd, '.harness');
  if (!existsSync(local) || realOrAbsolute(local) === realOrAbsolute(home)) return undefined;
  const state = homeState(local, env);
  if (state.state === 'missing' || state.state === 'empty') return undefined;
  if (state.state === 'ours') return `ignored ./.harness: HARNESS_HOME is unset, so state lives in ${home}; set HARNESS_HOME=.harness to use that folder`;
  return `ignored ./.harness: not created by this user on this machine; state lives in ${home} (to keep a ./.harness of your own from an older harness: harness home --adopt .harness, then set HARNESS_HOME=.harness)`;
}
