/**
 * Whose a HARNESS_HOME is: a missing or empty folder is created and marked, a marked one of this
 * user's is used, and anything else (content without a mark, a marked home copied or moved, one
 * marked under another user's key, another uid's folder) is refused until adopted deliberately.
 */
import { chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adoptHome, claimHome, homeState, MARK_FILE } from '../../machine/home-mark';
import { UserError } from '../../machine/errors';

const root = mkdtempSync(path.join(os.tmpdir(), 'harness-home-mark-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
/** A user: their own state folder (where the key lives). */
const user = () => ({ XDG_STATE_HOME: path.join(root, `state-${++n}`) });
const folder = () => path.join(root, `home-${++n}`);

function refusedWith(fn: () => void): UserError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return err as UserError;
  }
  throw new Error('expected a refusal');
}

describe('claimHome', () => {
  it('creates a missing folder, marks it, and uses it from then on', () => {
    const env = user();
    const home = folder();
    claimHome(home, env);
    expect(readdirSync(home)).toEqual([MARK_FILE]);
    expect(homeState(home, env)).toEqual({ state: 'ours' });
    writeFileSync(path.join(home, 'temporal.db'), 'state');
    claimHome(home, env);
    expect(homeState(home, env)).toEqual({ state: 'ours' });
  });

  it('marks an empty folder (a fresh mkdtemp) and keeps the key private', () => {
    const env = user();
    const home = mkdtempSync(path.join(root, 'fresh-'));
    claimHome(home, env);
    expect(homeState(home, env)).toEqual({ state: 'ours' });
    const key = path.join(env.XDG_STATE_HOME, 'harness', 'home-key');
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(key)).mode & 0o777).toBe(0o700);
  });

  it('refuses a folder with content and no mark, in one line with the way out, and writes nothing into it', () => {
    const env = user();
    const home = folder();
    mkdirSync(path.join(home, 'mcp-servers'), { recursive: true });
    writeFileSync(path.join(home, 'temporal.db'), 'planted');
    const err = refusedWith(() => claimHome(home, env));
    expect(err.message).toBe(`HARNESS_HOME ${home} was not created by the harness for this user on this machine: it holds files but no mark of the harness; nothing in it was used`);
    expect(err.hint).toContain(`harness home --adopt ${home}`);
    expect(err.message).not.toContain('\n');
    expect(readdirSync(home).sort()).toEqual(['mcp-servers', 'temporal.db']);
  });

  it('refuses a marked home copied or moved to another path, even for the same user', () => {
    const env = user();
    const home = folder();
    claimHome(home, env);
    writeFileSync(path.join(home, 'temporal.db'), 'state');
    const copy = folder();
    cpSync(home, copy, { recursive: true });
    expect(refusedWith(() => claimHome(copy, env)).message).toContain('its mark was made for another folder, user or machine');
    const moved = folder();
    renameSync(home, moved);
    expect(homeState(moved, env).state).toBe('foreign');
  });

  it("refuses a home marked with another user's key", () => {
    const home = folder();
    claimHome(home, user());
    writeFileSync(path.join(home, 'temporal.db'), 'state');
    expect(homeState(home, user()).state).toBe('foreign');
  });

  it('refuses a folder another uid owns, even an empty one, and will not adopt it', () => {
    const env = user();
    const home = folder();
    mkdirSync(home);
    chownSync(home, 54321, 54321);
    expect(refusedWith(() => claimHome(home, env)).message).toContain('it belongs to uid 54321');
    expect(refusedWith(() => adoptHome(home, env)).message).toContain('it belongs to uid 54321');
    expect(existsSync(path.join(home, MARK_FILE))).toBe(false);
  });
});

describe('adoptHome', () => {
  it('marks a folder made by an older harness, content and all, so that it is used', () => {
    const env = user();
    const home = folder();
    mkdirSync(path.join(home, 'workspaces'), { recursive: true });
    writeFileSync(path.join(home, 'temporal.db'), 'old sessions');
    adoptHome(home, env);
    claimHome(home, env);
    expect(readFileSync(path.join(home, 'temporal.db'), 'utf8')).toBe('old sessions');
  });

  it('replaces the stale mark of a home copied here', () => {
    const env = user();
    const home = folder();
    claimHome(home, env);
    const copy = folder();
    cpSync(home, copy, { recursive: true });
    expect(homeState(copy, env).state).toBe('foreign');
    adoptHome(copy, env);
    expect(homeState(copy, env)).toEqual({ state: 'ours' });
    expect(readdirSync(copy)).toEqual([MARK_FILE]);
  });
});
