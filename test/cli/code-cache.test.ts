/**
 * The CLI's V8 code cache (cli/code-cache.ts): a second start compiles nothing it compiled
 * before, and the cache never runs code that is not the source's: a file rebuilt to the same
 * length, a damaged cache, a folder others can write to and a turned-off cache all run the source
 * as it is now.
 */
import { spawn } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { cliEnv, HARNESS_BIN, removeTempDirs, ROOT, tempDir } from '../support/cli';

const CODE_CACHE = path.join(ROOT, 'dist', 'cli', 'code-cache.js');
const VERSION_DIR = `${process.version}-${process.arch}`;

afterAll(() => removeTempDirs());

interface Run {
  value: unknown;
  stats: { used: number; made: number; off?: string };
}

/** A folder of two modules, as the bundle's files are (a.js requires b.js); returns it. */
function sources(b = "module.exports = 'one';"): string {
  const dir = tempDir('harness-code-cache-src-');
  writeFileSync(path.join(dir, 'a.js'), "const b = require('./b.js');\nmodule.exports = () => [b, require.resolve('./b.js') === __dirname + '/b.js'];\n");
  writeFileSync(path.join(dir, 'b.js'), b);
  return dir;
}

/** Runs a process that uses the cache for `src` and requires a.js; what it got and what the cache did. */
async function run(src: string, env: NodeJS.ProcessEnv, cwd?: string): Promise<Run> {
  const out = path.join(tempDir('harness-code-cache-out-'), 'out.json');
  const code = `
const { useCodeCache, codeCacheStats } = require(${JSON.stringify(CODE_CACHE)});
useCodeCache(${JSON.stringify(src)});
const value = require(${JSON.stringify(path.join(src, 'a.js'))})();
require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify({ value, stats: codeCacheStats() }));`;
  const child = spawn(process.execPath, ['-e', code], { env, stdio: ['ignore', 'ignore', 'pipe'], ...(cwd ? { cwd } : {}) });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect([exit, stderr]).toEqual([0, '']);
  return JSON.parse(readFileSync(out, 'utf8')) as Run;
}

/** A cache folder of its own (XDG_CACHE_HOME) and the environment that names it. */
function cacheEnv(extra: Record<string, string> = {}): { env: NodeJS.ProcessEnv; dir: string } {
  const base = tempDir('harness-code-cache-');
  return { env: cliEnv({ XDG_CACHE_HOME: base, ...extra }), dir: path.join(base, 'harness', 'code-cache', VERSION_DIR) };
}

/** The cache's files with their inode and modification time. */
function filesIn(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((f) => [f, `${statSync(path.join(dir, f)).ino}:${statSync(path.join(dir, f)).mtimeMs}`]));
}

describe('the code cache', () => {
  it('is made by the first start, private, and used by the next without being written again', async () => {
    const src = sources();
    const { env, dir } = cacheEnv();
    expect(await run(src, env)).toEqual({ value: ['one', true], stats: { used: 0, made: 2 } });
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const files = filesIn(dir);
    expect(Object.keys(files)).toHaveLength(2);
    for (const f of Object.keys(files)) expect(statSync(path.join(dir, f)).mode & 0o777).toBe(0o600);
    expect(await run(src, env)).toEqual({ value: ['one', true], stats: { used: 2, made: 0 } });
    expect(filesIn(dir)).toEqual(files);
  });

  it('runs a file rebuilt to the same length as it is now, not as it was cached', async () => {
    const src = sources("module.exports = 'one';");
    const { env } = cacheEnv();
    await run(src, env);
    expect((await run(src, env)).stats.used).toBe(2);
    // V8 itself checks no more than the length: only the cache's header tells the two apart.
    writeFileSync(path.join(src, 'b.js'), "module.exports = 'two';");
    expect(await run(src, env)).toEqual({ value: ['two', true], stats: { used: 1, made: 1 } });
    expect(await run(src, env)).toEqual({ value: ['two', true], stats: { used: 2, made: 0 } });
  });

  it('compiles the source when a cache file is damaged, and writes it anew', async () => {
    const src = sources();
    const { env, dir } = cacheEnv();
    await run(src, env);
    for (const f of readdirSync(dir)) {
      const data = readFileSync(path.join(dir, f));
      const nl = data.indexOf(10);
      // One keeps its header over garbage (V8 refuses it); the other loses its header.
      const damaged = f.startsWith('a.js') ? Buffer.concat([data.subarray(0, nl + 1), Buffer.alloc(data.length - nl - 1, 0x5a)]) : data.subarray(nl + 1);
      writeFileSync(path.join(dir, f), damaged);
    }
    expect(await run(src, env)).toEqual({ value: ['one', true], stats: { used: 0, made: 2 } });
    expect(await run(src, env)).toEqual({ value: ['one', true], stats: { used: 2, made: 0 } });
  });

  it('is not used from a folder others can write to, or another user owns', async () => {
    const src = sources();
    const { env, dir } = cacheEnv();
    await run(src, env);
    chmodSync(dir, 0o777);
    const open = await run(src, env);
    expect(open.value).toEqual(['one', true]);
    expect(open.stats).toEqual({ used: 0, made: 0, off: `${dir} is writable by others` });
    chmodSync(dir, 0o700);
    if (process.getuid?.() === 0) {
      chownSync(dir, 65534, 65534);
      expect((await run(src, env)).stats).toEqual({ used: 0, made: 0, off: `${dir} belongs to another user` });
    }
  });

  it('is off with HARNESS_CODE_CACHE=0, and when its folder cannot be made', async () => {
    const src = sources();
    const { env, dir } = cacheEnv({ HARNESS_CODE_CACHE: '0' });
    expect(await run(src, env)).toEqual({ value: ['one', true], stats: { used: 0, made: 0, off: 'HARNESS_CODE_CACHE=0' } });
    expect(existsSync(dir)).toBe(false);
    const file = path.join(tempDir('harness-code-cache-'), 'a-file');
    writeFileSync(file, '');
    const blocked = await run(src, cliEnv({ XDG_CACHE_HOME: file }));
    expect(blocked.value).toEqual(['one', true]);
    expect(blocked.stats.off).toMatch(/^.*a-file\/harness\/code-cache\/.*: ENOTDIR/);
  });

  it('takes no relative XDG_CACHE_HOME (the working directory is not the user\'s): the home folder\'s .cache instead, and no relative home folder', async () => {
    const src = sources();
    const home = tempDir('harness-code-cache-home-');
    mkdirSync(path.join(home, 'cwd'));
    const env = cliEnv({ HOME: home, XDG_CACHE_HOME: 'cwd' });
    expect((await run(src, env)).stats.made).toBe(2);
    expect(readdirSync(path.join(home, '.cache', 'harness', 'code-cache', VERSION_DIR))).toHaveLength(2);
    // A relative home folder is no place either: off, and nothing written where the process runs.
    const cwd = path.join(home, 'cwd');
    const relative = await run(src, cliEnv({ HOME: 'cwd' }), cwd);
    expect(relative.value).toEqual(['one', true]);
    expect(relative.stats).toEqual({ used: 0, made: 0, off: 'the home folder "cwd" is not an absolute path' });
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('leaves a file that starts with #! to Node, which strips that line', async () => {
    const src = sources("#!/usr/bin/env node\nmodule.exports = 'one';\n");
    const { env } = cacheEnv();
    expect(await run(src, env)).toEqual({ value: ['one', true], stats: { used: 0, made: 1 } });
    expect(await run(src, env)).toEqual({ value: ['one', true], stats: { used: 1, made: 0 } });
  });

  it('leaves ES modules and files that import() to Node, and a syntax error is reported as Node reports it', async () => {
    const src = sources("module.exports = require('./esm/c.js').default;");
    writeFileSync(path.join(src, 'a.js'), "const b = require('./b.js');\nmodule.exports = () => [b, typeof import('node:os').then];\n");
    mkdirSync(path.join(src, 'esm'));
    writeFileSync(path.join(src, 'esm', 'package.json'), '{"type":"module"}');
    writeFileSync(path.join(src, 'esm', 'c.js'), "export default 'one';\n");
    const { env } = cacheEnv();
    // b.js only: a.js may import(), c.js is an ES module.
    expect(await run(src, env)).toEqual({ value: ['one', 'function'], stats: { used: 0, made: 1 } });
    expect(await run(src, env)).toEqual({ value: ['one', 'function'], stats: { used: 1, made: 0 } });
    writeFileSync(path.join(src, 'b.js'), 'module.exports = (;');
    const child = spawn(process.execPath, ['-e', `require(${JSON.stringify(CODE_CACHE)}).useCodeCache(); require(${JSON.stringify(path.join(src, 'b.js'))});`], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(1);
    // Where and what, as Node says it: the file and line, the line, the error.
    expect(stderr).toMatch(new RegExp(`^${path.join(src, 'b.js')}:1\\nmodule\\.exports = \\(;\\n\\s+\\^\\n\\nSyntaxError: Unexpected token ';'`));
  });

  it('holds when several first starts write at once', async () => {
    const src = sources();
    const { env } = cacheEnv();
    const runs = await Promise.all(Array.from({ length: 6 }, () => run(src, env)));
    for (const r of runs) expect(r.value).toEqual(['one', true]);
    expect(await run(src, env)).toEqual({ value: ['one', true], stats: { used: 2, made: 0 } });
  });
});

describe('harness with the code cache', () => {
  /** Runs `harness args` twice with a cache of its own: each run's exit, output and what the cache did. */
  async function twice(args: string[], extra: Record<string, string> = {}) {
    const { env: base, dir } = cacheEnv();
    const env = { ...base, HARNESS_HOME: tempDir('harness-code-cache-home-'), ...extra };
    const probeDir = tempDir('harness-code-cache-probe-');
    const probe = path.join(probeDir, 'probe.js');
    const out = path.join(probeDir, 'stats.json');
    writeFileSync(probe, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(require(${JSON.stringify(CODE_CACHE)}).codeCacheStats())));`);
    const once = async () => {
      const child = spawn(process.execPath, ['--require', probe, HARNESS_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      return { code, stdout, stderr, stats: JSON.parse(readFileSync(out, 'utf8')) as Run['stats'] };
    };
    const first = await once();
    return { first, second: await once(), dir };
  }

  it('runs a client command from its bundle with the code the first start made', async () => {
    const { first, second, dir } = await twice(['status', 'no-such-session'], { TEMPORAL_ADDRESS: inject('temporalAddress') });
    expect([first.code, first.stderr]).toEqual([1, expect.stringMatching(/^error: no session named/)]);
    expect(first.stats.used).toBe(0);
    // The bundle's files it loaded, main.js and the Temporal client's among them.
    expect(first.stats.made).toBeGreaterThan(10);
    expect(readdirSync(dir).some((f) => f.startsWith('main.js.'))).toBe(true);
    expect([second.code, second.stderr]).toEqual([first.code, first.stderr]);
    expect(second.stats).toEqual({ used: first.stats.made, made: 0 });
  }, 60_000);

  it('is not used by the other commands, which gain little from it', async () => {
    const { first, second, dir } = await twice(['--help']);
    expect([first.code, first.stderr]).toEqual([0, '']);
    expect(first.stdout).toContain('Usage: harness');
    expect([first.stats, second.stats]).toEqual([
      { used: 0, made: 0 },
      { used: 0, made: 0 },
    ]);
    expect(existsSync(dir)).toBe(false);
  }, 60_000);
});
