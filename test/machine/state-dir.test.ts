/**
 * The default HARNESS_HOME: one folder per project in the user's state folder, never inside the
 * working tree, named by the working directory's real path.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultHome, harnessStateDir, homeOf, lookupIn } from '../../machine/state-dir';
import { harnessHome } from '../../machine/paths';

const root = mkdtempSync(path.join(os.tmpdir(), 'harness-state-dir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const env = (vars: Record<string, string>) => lookupIn(vars);

describe('the default HARNESS_HOME', () => {
  it('is a folder under $XDG_STATE_HOME/harness/projects named by the project folder and a hash of its real path', () => {
    const project = path.join(root, 'my project!');
    mkdirSync(project);
    const home = defaultHome(project, env({ XDG_STATE_HOME: '/state' }));
    expect(home).toMatch(/^\/state\/harness\/projects\/my_project_-[0-9a-f]{12}$/);
    expect(home.startsWith(project)).toBe(false);
  });

  it('falls back to ~/.local/state when XDG_STATE_HOME is unset or not absolute', () => {
    expect(harnessStateDir(env({ HOME: '/home/u' }))).toBe('/home/u/.local/state/harness');
    expect(harnessStateDir(env({ HOME: '/home/u', XDG_STATE_HOME: 'relative/state' }))).toBe('/home/u/.local/state/harness');
  });

  it('is the same for a project reached through a symlink, and differs for two projects with one name', () => {
    const a = path.join(root, 'a', 'app');
    const b = path.join(root, 'b', 'app');
    mkdirSync(a, { recursive: true });
    mkdirSync(b, { recursive: true });
    symlinkSync(a, path.join(root, 'link'));
    const e = env({ XDG_STATE_HOME: '/state' });
    expect(defaultHome(path.join(root, 'link'), e)).toBe(defaultHome(a, e));
    expect(defaultHome(a, e)).not.toBe(defaultHome(b, e));
    expect(path.basename(defaultHome(b, e))).toMatch(/^app-/);
  });

  it('gives way to HARNESS_HOME, resolved against the working directory', () => {
    expect(homeOf(env({ HARNESS_HOME: '.harness', XDG_STATE_HOME: '/state' }), '/work/p')).toBe('/work/p/.harness');
    expect(harnessHome({ HARNESS_HOME: '/abs/home' }, '/work/p')).toBe('/abs/home');
    expect(harnessHome({ XDG_STATE_HOME: '/state' }, root)).toBe(defaultHome(root, env({ XDG_STATE_HOME: '/state' })));
  });
});
