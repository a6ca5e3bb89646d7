/**
 * `harness home`: the state folder a project uses (outside the working tree unless HARNESS_HOME
 * says otherwise), created and marked on first use, and `--adopt` for a folder the user trusts.
 * The built CLI, with its own HOME and XDG folders.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, describeResult, removeTempDirs, runCli, stackLines, tempDir } from '../support/cli';

afterAll(() => removeTempDirs());

/** A user of their own: HOME and the XDG folders in a temp dir. */
function userEnv(extra: Record<string, string> = {}): { env: NodeJS.ProcessEnv; state: string } {
  const dir = tempDir('harness-home-user-');
  const state = path.join(dir, 'state');
  return { state, env: cliEnv({ HOME: dir, XDG_STATE_HOME: state, XDG_CONFIG_HOME: path.join(dir, 'config'), ...extra }) };
}

describe('harness home', () => {
  it("prints the project's folder under the user's state folder, made on first use, and the same one after", async () => {
    const { env, state } = userEnv();
    const project = tempDir('harness-home-project-');
    const first = await runCli(['home'], { env, cwd: project });
    expect(first.code, describeResult(first)).toBe(0);
    const home = first.stdout.trim();
    expect(home).toMatch(new RegExp(`^${state}/harness/projects/harness-home-project-\\w+-[0-9a-f]{12}$`));
    expect(readdirSync(home)).toEqual(['.harness-home']);
    expect(readdirSync(project)).toEqual([]);
    const again = await runCli(['home'], { env, cwd: project });
    expect(again.stdout.trim()).toBe(home);
    expect(again.stderr).toBe('');
  });

  it('agrees with itself when several processes claim one new HARNESS_HOME at once', async () => {
    const home = path.join(tempDir('harness-home-race-'), 'home');
    const { env } = userEnv({ HARNESS_HOME: home });
    const all = await Promise.all(Array.from({ length: 6 }, () => runCli(['home'], { env })));
    for (const r of all) {
      expect(r.code, describeResult(r)).toBe(0);
      expect(r.stdout.trim()).toBe(home);
    }
  });

  it('refuses a HARNESS_HOME with content it did not mark (one line and a hint), and uses it once adopted', async () => {
    const old = path.join(tempDir('harness-home-old-'), '.harness');
    mkdirSync(path.join(old, 'workspaces'), { recursive: true });
    writeFileSync(path.join(old, 'temporal.db'), 'sessions of an older harness');
    const { env } = userEnv({ HARNESS_HOME: old });
    const refused = await runCli(['home'], { env });
    expect(refused.code, describeResult(refused)).toBe(1);
    expect(refused.errLines).toEqual([
      `error: HARNESS_HOME ${old} was not created by the harness for this user on this machine: it holds files but no mark of the harness; nothing in it was used`,
      `hint: point HARNESS_HOME at a new or empty folder, or, if it is yours and you trust what is in it (say, made by an older harness), adopt it once: harness home --adopt ${old}`,
    ]);
    expect(readdirSync(old).sort()).toEqual(['temporal.db', 'workspaces']);

    const adopted = await runCli(['home', '--adopt', old], { env });
    expect(adopted.code, describeResult(adopted)).toBe(0);
    expect(adopted.errLines).toEqual([`adopted ${old} as your harness home`]);
    const used = await runCli(['home'], { env });
    expect(used.code, describeResult(used)).toBe(0);
    expect(used.stdout.trim()).toBe(old);
    expect(stackLines(used.stderr)).toEqual([]);
  });
});
