/**
 * A V8 code cache for the CLI's bundle (the client commands). Much of a client command's start-up
 * is V8 parsing and compiling the bundle's code (the Temporal client, grpc-js, protobufjs): about
 * 50 of a `status`'s ~280 ms of CPU. Each file is compiled here with the code V8 made for it the
 * last time, which V8 then skips making again. The cache is made after the command ran, so it
 * holds every function the command ran, not only the files' top level (V8 compiles functions
 * when first called). The other commands gain little from it (a warm `run` 4 %, `--help` none:
 * their time is elsewhere), so they compile as Node does.
 *
 * Where it is kept: the user's cache folder (XDG_CACHE_HOME, else ~/.cache), one folder per Node
 * version, never the working directory. Code cache is code, so the folder is used only when it is
 * this user's own and nobody else can write to it; a file is used only for the very source file
 * it was made from (its path, size, inode and times, in the file's header): V8 itself checks no
 * more than the source's length. Anything wrong (no folder, a damaged file, a full disk) falls
 * back to compiling as Node does. HARNESS_CODE_CACHE=0 turns it off.
 *
 * Loaded by bin/harness.js before the bundle, so it needs nothing but Node's built-ins.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';

/** What the cache did in this process (tests read it). */
export interface CodeCacheStats {
  /** Files compiled with their cached code. */
  used: number;
  /** Files compiled without (none, stale or refused by V8), whose code is written at exit. */
  made: number;
  /** Why the cache is not used at all, when it is not. */
  off?: string;
}

const stats: CodeCacheStats = { used: 0, made: 0 };

export function codeCacheStats(): CodeCacheStats {
  return { ...stats };
}

/** The cache folder for this Node, or why there is none. */
export function codeCacheDir(env: NodeJS.ProcessEnv = process.env): { dir: string } | { off: string } {
  if (env.HARNESS_CODE_CACHE === '0') return { off: 'HARNESS_CODE_CACHE=0' };
  let home: string;
  try {
    home = os.homedir();
  } catch (err) {
    return { off: `no home folder: ${(err as Error).message}` };
  }
  // Never relative: that would be the working directory, which is not the user's to trust.
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : path.isAbsolute(home) ? path.join(home, '.cache') : undefined;
  if (!base) return { off: `the home folder ${JSON.stringify(home)} is not an absolute path` };
  const dir = path.join(base, 'harness', 'code-cache', `${process.version}-${process.arch}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = statSync(dir);
    const uid = process.getuid?.();
    if (uid !== undefined && st.uid !== uid) return { off: `${dir} belongs to another user` };
    if ((st.mode & 0o022) !== 0) return { off: `${dir} is writable by others` };
    return { dir };
  } catch (err) {
    return { off: `${dir}: ${(err as Error).message}` };
  }
}

/**
 * The identity of a source file as its cache header records it: a rebuilt file differs in its
 * times or inode. Throws when the content Node read is not the file's size (written meanwhile).
 */
function identity(filename: string, content: string): string {
  const st = statSync(filename);
  if (st.size !== Buffer.byteLength(content)) throw new Error('changed while read');
  return JSON.stringify([filename, st.size, st.ino, st.mtimeMs, st.ctimeMs]);
}

/** The file's cache, when its header names this very source. */
function readCache(file: string, id: string): Buffer | undefined {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch {
    return undefined;
  }
  const nl = data.indexOf(10);
  if (nl < 0 || data.toString('utf8', 0, nl) !== id) return undefined;
  return data.subarray(nl + 1);
}

/** A stable file name for a source path (FNV-1a: no crypto module to load). */
function cacheName(filename: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < filename.length; i++) h = Math.imul(h ^ filename.charCodeAt(i), 0x01000193) >>> 0;
  return `${path.basename(filename)}.${h.toString(16)}`;
}

interface ModuleInternals {
  _compile(content: string, filename: string, format?: string): unknown;
  exports: unknown;
  require(id: string): unknown;
}
const ModuleStatics = Module as unknown as {
  prototype: ModuleInternals;
  wrap(content: string): string;
  _resolveFilename(request: string, parent: unknown, isMain: boolean, options?: unknown): string;
  _resolveLookupPaths(request: string, parent: unknown): string[] | null;
  _extensions: unknown;
  _cache: unknown;
};

/**
 * Compiles the CommonJS files this process loads from now on (those under `scope` only, when
 * given) with cached code. Returns why it does not, when it does not.
 */
export function useCodeCache(scope?: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const where = codeCacheDir(env);
  if ('off' in where) {
    stats.off = where.off;
    return where.off;
  }
  const prefix = scope === undefined ? '' : scope.endsWith(path.sep) ? scope : scope + path.sep;
  const pending: { script: vm.Script; file: string; id: string }[] = [];
  const compile = ModuleStatics.prototype._compile;
  ModuleStatics.prototype._compile = function (this: ModuleInternals, content: string, filename: string, format?: string) {
    // Node's to compile: an ES module (a require of one), a file starting with `#!` (only Node's
    // compile strips that line), and one that may import() (a script compiled here has no module
    // loader for it on Node 20: the embedded database's loader failed so).
    if (format === 'module' || !filename.startsWith(prefix) || content.startsWith('#!') || content.includes('import(')) return compile.call(this, content, filename, format);
    let id: string;
    try {
      id = identity(filename, content);
    } catch {
      return compile.call(this, content, filename, format);
    }
    const file = path.join(where.dir, cacheName(filename));
    const cachedData = readCache(file, id);
    let script: vm.Script;
    try {
      script = new vm.Script(ModuleStatics.wrap(content), { filename, ...(cachedData ? { cachedData } : {}) });
    } catch {
      // Not CommonJS after all (module syntax in a file of no declared type), or a syntax error:
      // Node's compile tells which, and says so as it would without this cache.
      return compile.call(this, content, filename, format);
    }
    if (cachedData && !script.cachedDataRejected) stats.used += 1;
    else {
      stats.made += 1;
      pending.push({ script, file, id });
    }
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return wrapper.call(this.exports, this.exports, requireFor(this), this, filename, path.dirname(filename));
  };
  // At exit, when every function the command ran is compiled: write what was made this time.
  process.once('exit', () => {
    for (const { script, file, id } of pending) {
      try {
        const tmp = `${file}.${process.pid}.tmp`;
        writeFileSync(tmp, Buffer.concat([Buffer.from(`${id}\n`), script.createCachedData()]), { mode: 0o600 });
        renameSync(tmp, file);
      } catch {
        // A cache that cannot be written only costs the next start its compile.
      }
    }
  });
  return undefined;
}

/** The `require` Node gives a module (lib/internal/modules/helpers.js makeRequireFunction). */
function requireFor(mod: ModuleInternals): NodeJS.Require {
  const req = ((id: string) => mod.require(id)) as NodeJS.Require;
  const resolve = ((request: string, options?: { paths?: string[] }) => ModuleStatics._resolveFilename(request, mod, false, options)) as NodeJS.RequireResolve;
  resolve.paths = (request: string) => ModuleStatics._resolveLookupPaths(request, mod);
  req.resolve = resolve;
  req.main = require.main;
  req.extensions = ModuleStatics._extensions as NodeJS.RequireExtensions;
  req.cache = ModuleStatics._cache as NodeJS.Dict<NodeModule>;
  return req;
}
