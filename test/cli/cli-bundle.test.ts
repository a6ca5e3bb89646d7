/**
 * The CLI's bundle (scripts/bundle-cli.ts, dist/cli/bundle/): it is what the build makes of the
 * sources as they are now, `harness` runs every client command from it (cli/client-commands.ts)
 * and such a process loads nothing of the harness nor of the packages in the bundle from anywhere
 * else (one copy of each; the lean Temporal API root's halves aside), while the other commands
 * run tsc's build as before.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { CLIENT_COMMANDS } from '../../cli/client-commands';
import { cliEnv, HARNESS_BIN, removeTempDirs, ROOT, tempDir } from '../support/cli';

const BUNDLE = path.join(ROOT, 'dist', 'cli', 'bundle');

afterAll(() => removeTempDirs());

/** Every file of a folder with its text, by name. */
function filesOf(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(path.join(dir, f), 'utf8')]));
}

/** Runs `harness args` with a preloaded probe; the files the process had loaded when it exited. */
async function loadedBy(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; files: string[]; stderr: string }> {
  const dir = tempDir('harness-cli-bundle-');
  const probe = path.join(dir, 'probe.js');
  const out = path.join(dir, 'loaded.json');
  writeFileSync(probe, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(Object.keys(require.cache))));`);
  const child = spawn(process.execPath, ['--require', probe, HARNESS_BIN, ...args], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const files = (JSON.parse(readFileSync(out, 'utf8')) as string[]).filter((f) => f !== probe).map((f) => path.relative(ROOT, f));
  return { code, files, stderr };
}

/** Arguments that take each client command into its action: a session that does not exist. */
const CALLS: Record<string, string[]> = {
  status: ['status', 'no-such-session'],
  sessions: ['sessions', '--json'],
  answer: ['answer', 'no-such-session', 'yes'],
  end: ['end', 'no-such-session'],
  approve: ['approve', 'no-such-session', 't1-s1-c0'],
  deny: ['deny', 'no-such-session', 't1-s1-c0', '--reason', 'no'],
  wake: ['wake', 'no-such-session'],
  send: ['send', 'no-such-session', 'hello'],
  // A list read under a loaded machine can take seconds: the default wait, not a second.
  pending: ['pending', '--json'],
  show: ['show', 'no-such-session', 't1-s1-c0'],
  cancel: ['cancel', 'no-such-session'],
};

describe('the CLI bundle', () => {
  it('is what the build makes of the sources now', () => {
    const fresh = tempDir('harness-cli-bundle-fresh-');
    execFileSync(process.execPath, [path.join(ROOT, 'dist', 'scripts', 'bundle-cli.js'), fresh], { cwd: ROOT, stdio: 'pipe' });
    const built = filesOf(BUNDLE);
    expect(Object.keys(built)).toContain('main.js');
    // Not toEqual on the whole: a difference would print megabytes.
    expect(Object.keys(built).sort()).toEqual(Object.keys(filesOf(fresh)).sort());
    const stale = Object.entries(filesOf(fresh))
      .filter(([f, text]) => built[f] !== text)
      .map(([f]) => f);
    expect(stale, 'dist/cli/bundle is not what `npm run build` makes of the sources now').toEqual([]);
  });

  it('runs every client command, which loads the harness and the bundled packages from nowhere else', async () => {
    expect(Object.keys(CALLS).sort()).toEqual([...CLIENT_COMMANDS.keys()].sort());
    const home = tempDir('harness-cli-bundle-home-');
    const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: home, HARNESS_TASK_QUEUE: `cli-bundle-${process.pid}` });
    // The packages the bundle holds, by the file names rolldown notes above each module.
    const bundled = new Set(Object.values(filesOf(BUNDLE)).flatMap((text) => [...text.matchAll(/^\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((m) => m[1]!)));
    expect([...bundled]).toEqual(expect.arrayContaining(['@temporalio/client', '@temporalio/common', '@grpc/grpc-js', 'protobufjs', 'commander']));
    // Of the harness: the bundle, what chooses it, its code cache and the API root's halves; of the bundled packages: nothing.
    const harnessFiles = ['bin/harness.js', 'dist/cli/client-commands.js', 'dist/cli/code-cache.js', 'dist/client/lean-proto/eager.js', 'dist/client/lean-proto/rest.js'];
    const allowed = (file: string) => {
      const f = file.split(path.sep).join('/');
      const pkg = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f)?.[1];
      return pkg ? !bundled.has(pkg) : f.startsWith('dist/cli/bundle/') || harnessFiles.includes(f);
    };
    for (const [command, args] of Object.entries(CALLS)) {
      const r = await loadedBy(args, env);
      // Its action ran: it answered (pending: an empty list) or found no such session.
      expect([r.code, r.stderr], command).toEqual(command === 'sessions' || command === 'pending' ? [0, ''] : [1, expect.stringMatching(/^error: (no session named|session no-such-session has no call)/)]);
      expect(r.files.filter((f) => !allowed(f)), `${command} loaded files outside the bundle`).toEqual([]);
      // It reached Temporal through the client, with the eager half of the API.
      expect(r.files, command).toContain(path.join('dist', 'client', 'lean-proto', 'eager.js'));
    }
  }, 120_000);

  it('is not what the other commands run', async () => {
    for (const args of [['--help'], ['run', '--help'], ['skills', '--json']]) {
      const r = await loadedBy(args, cliEnv({ HARNESS_HOME: tempDir('harness-cli-bundle-home-') }));
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.files, args.join(' ')).toContain(path.join('dist', 'cli', 'main.js'));
      expect(r.files.filter((f) => f.startsWith(path.join('dist', 'cli', 'bundle'))), args.join(' ')).toEqual([]);
    }
  });
});
