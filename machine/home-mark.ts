/**
 * Whose a HARNESS_HOME is. Everything under it is trusted: the Temporal database (sessions the
 * background worker resumes, with the MCP commands their config names), the memory database
 * (memories go into prompts), scripts, pid files (processes `dev --stop` signals), MCP server notes
 * (pids a starting worker kills). So the harness only uses a folder it made for this user on this
 * machine, and proves it with a mark a copied folder cannot carry:
 *
 * - a key of the user's own, made once: `<state dir>/home-key` (machine/state-dir.ts; 0600);
 * - in each home, `.harness-home`: an HMAC of the home's real path under that key.
 *
 * A home is used when it is missing or empty (it is created and marked), or when it is owned by
 * the current uid and its mark is the one the key gives for its real path. Anything else (a folder
 * a checkout ships, one copied or moved from elsewhere, another user's, one made by a harness
 * before marks) is refused until its owner adopts it deliberately (`harness home --adopt`).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { UserError } from './errors';
import { harnessStateDir, lookupIn, realOrAbsolute } from './state-dir';

/** The mark's file name inside a home. */
export const MARK_FILE = '.harness-home';
const MARK_PREFIX = 'harness-home v1 ';
const KEY_FILE = 'home-key';

/** What a folder is, as a home for this user. */
type HomeState = { state: 'ours' } | { state: 'missing' } | { state: 'empty' } | { state: 'foreign'; why: string };

function uid(): number | undefined {
  return process.getuid?.();
}

/** The user's key, made on first use (two processes making it at once agree: the first link wins). */
function userKey(env: NodeJS.ProcessEnv): Buffer {
  const dir = harnessStateDir(lookupIn(env));
  const file = path.join(dir, KEY_FILE);
  const read = () => {
    const st = statSync(file);
    const me = uid();
    if (me !== undefined && st.uid !== me) throw new UserError(`${file} belongs to uid ${st.uid}, not to you (uid ${me})`, 'set XDG_STATE_HOME to a folder of your own');
    return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
  };
  try {
    return read();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw keyProblem(file, err);
  }
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    try {
      linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(tmp);
    }
    return read();
  } catch (err) {
    throw keyProblem(file, err);
  }
}

function keyProblem(file: string, err: unknown): Error {
  if (err instanceof UserError) return err;
  return new UserError(`cannot keep the harness's key at ${file}: ${(err as Error).message}`, 'set XDG_STATE_HOME (or HOME) to a folder you can write');
}

function markFor(key: Buffer, realHome: string): string {
  return MARK_PREFIX + createHmac('sha256', key).update(`harness-home\0${realHome}\0${uid() ?? ''}`).digest('hex');
}

/** Sleeps without an event loop: a mark another process is writing right now shows up within milliseconds. */
function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** What `home` is for this user; reads the key only when the folder has content to check. */
export function homeState(home: string, env: NodeJS.ProcessEnv = process.env): HomeState {
  let st;
  try {
    st = statSync(home);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'missing' };
    return { state: 'foreign', why: `it cannot be read (${(err as NodeJS.ErrnoException).code})` };
  }
  if (!st.isDirectory()) return { state: 'foreign', why: 'it is not a folder' };
  const me = uid();
  if (me !== undefined && st.uid !== me) return { state: 'foreign', why: `it belongs to uid ${st.uid}, not to you (uid ${me})` };
  const entries = readdirSync(home);
  if (entries.length === 0) return { state: 'empty' };
  if (!entries.includes(MARK_FILE)) return { state: 'foreign', why: 'it holds files but no mark of the harness' };
  const expected = Buffer.from(markFor(userKey(env), realOrAbsolute(home)));
  // A mark being written by another process this instant is read again rather than refused.
  for (let attempt = 0; ; attempt++) {
    let found: Buffer;
    try {
      found = Buffer.from(readFileSync(path.join(home, MARK_FILE), 'utf8').trim());
    } catch {
      found = Buffer.alloc(0);
    }
    if (found.length === expected.length && timingSafeEqual(found, expected)) return { state: 'ours' };
    if (found.length >= expected.length || attempt >= 20) return { state: 'foreign', why: 'its mark was made for another folder, user or machine (copied or moved here)' };
    pause(10);
  }
}

/** Writes the mark (first writer wins; a second finds the same mark in place). */
function writeMark(home: string, env: NodeJS.ProcessEnv): void {
  const mark = markFor(userKey(env), realOrAbsolute(home));
  let fd: number;
  try {
    fd = openSync(path.join(home, MARK_FILE), 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw err;
  }
  try {
    writeSync(fd, `${mark}\n`);
  } finally {
    closeSync(fd);
  }
}

/** How a refused home is described, and how to get on. */
function refusal(home: string, why: string): UserError {
  return new UserError(
    `HARNESS_HOME ${home} was not created by the harness for this user on this machine: ${why}; nothing in it was used`,
    `point HARNESS_HOME at a new or empty folder, or, if it is yours and you trust what is in it (say, made by an older harness), adopt it once: harness home --adopt ${home}`,
  );
}

/**
 * Makes `home` usable or throws: a missing or empty folder is created and marked (`mode` for a
 * folder made here), a marked one of this user's is used, anything else is refused.
 */
export function claimHome(home: string, env: NodeJS.ProcessEnv = process.env, mode?: number): void {
  const state = homeState(home, env);
  if (state.state === 'ours') return;
  if (state.state === 'foreign') throw refusal(home, state.why);
  if (state.state === 'missing') mkdirSync(home, { recursive: true, ...(mode !== undefined ? { mode } : {}) });
  writeMark(home, env);
  // Another process may have put something else there meanwhile: checked like any home.
  const after = homeState(home, env);
  if (after.state !== 'ours') throw refusal(home, after.state === 'foreign' ? after.why : 'its mark could not be written');
}

/**
 * Marks `home` as this user's whatever it holds: the deliberate adoption of a folder made by an
 * older harness or moved here. Another user's folder stays refused.
 */
export function adoptHome(home: string, env: NodeJS.ProcessEnv = process.env): void {
  mkdirSync(home, { recursive: true });
  const me = uid();
  const owner = statSync(home).uid;
  if (me !== undefined && owner !== me) throw refusal(home, `it belongs to uid ${owner}, not to you (uid ${me})`);
  if (homeState(home, env).state === 'ours') return;
  const file = path.join(home, MARK_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${markFor(userKey(env), realOrAbsolute(home))}\n`, { mode: 0o600 });
  // Replaces a stale mark in one step.
  renameSync(tmp, file);
}
