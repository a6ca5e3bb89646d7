/**
 * An exclusive, process-wide lock on an embedded data folder. PGlite is a single-user
 * Postgres: two processes (or two PGlite instances in one process) on one folder each see
 * their own copy of the data and corrupt it for good. The lock is held for as long as the
 * database is open, and a second opener gets MemoryUnavailableError naming the holder.
 *
 * On Linux the lock is an abstract-namespace Unix socket named after the folder: binding it
 * twice fails, and the kernel frees it when the holder dies, so there is no stale file and no
 * race between checking and taking. The holder answers a connection with its pid, which is
 * how the refusal names it. Elsewhere it is a pid file created with O_EXCL beside the folder,
 * taken over when the pid it names is no longer alive.
 *
 * Abstract sockets belong to a network namespace: containers with their own networks that
 * share one HARNESS_HOME volume do not see each other's lock. They must use DATABASE_URL.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, realpathSync, statSync, unlinkSync, writeSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryUnavailableError, UNAVAILABLE_PREFIX } from './errors';
import { processAlive } from '../../machine/pids';

/** A held lock. */
interface DataDirLock {
  /** How it is held: `socket` (Linux abstract socket) or `file` (pid file). */
  kind: 'socket' | 'file';
  /** Frees the lock; idempotent. */
  release(): Promise<void>;
}

/** How to lock: the platform default, or one method explicitly (tests exercise both). */
export type LockMethod = 'socket' | 'file';

// Pid files this process holds, by path: a file naming our own pid that is not in here was
// left by an earlier process that had the same pid (containers restart with small pids).
const heldFiles = new Set<string>();

/** Takes the lock on an existing folder, or throws MemoryUnavailableError naming the holder. */
export async function lockDataDir(dataDir: string, method: LockMethod = process.platform === 'linux' ? 'socket' : 'file'): Promise<DataDirLock> {
  // The real path, so two spellings of one folder (symlinks, `..`) contend for one lock.
  const dir = realpathSync(dataDir);
  return method === 'socket' ? lockWithSocket(dir) : lockWithFile(dir);
}

/** The folder is locked by another opener (named by `holder` when it said who it is). */
export class DataDirInUseError extends MemoryUnavailableError {
  constructor(
    message: string,
    readonly holder: number | undefined,
  ) {
    super(message);
  }
}

/** The one-line refusal: who holds the folder and how to share memory instead. */
function lockedError(dir: string, pid: number | undefined): DataDirInUseError {
  const holder = pid === undefined ? 'another process' : pid === process.pid ? `this process (pid ${pid})` : `another process (pid ${pid})`;
  return new DataDirInUseError(
    `${UNAVAILABLE_PREFIX}the embedded database ${dir} is in use by ${holder}; only one worker can open it: set DATABASE_URL to share memory between workers`,
    pid,
  );
}

/** How to wait for a folder another process holds. */
export interface LockWait {
  /** Called once per holder with the refusal, when the wait starts and when the holder changes. */
  onWait?(refusal: DataDirInUseError): void;
  /** Ends the wait (rejecting with the signal's reason). */
  signal?: AbortSignal;
  /** How often the lock is tried again (default 500 ms: the holder's death frees it at once). */
  pollMs?: number;
}

/**
 * Takes the lock, waiting while another process holds it; any other failure rejects at once.
 * A worker uses this instead of running without the database (see workers/main.ts).
 */
export async function waitForDataDirLock(dataDir: string, method: LockMethod | undefined, wait: LockWait): Promise<DataDirLock> {
  let told: number | undefined | null = null;
  for (;;) {
    wait.signal?.throwIfAborted();
    try {
      return await lockDataDir(dataDir, method);
    } catch (err) {
      if (!(err instanceof DataDirInUseError)) throw err;
      if (told !== err.holder) wait.onWait?.(err);
      told = err.holder;
    }
    await sleep(wait.pollMs ?? 500, undefined, wait.signal ? { signal: wait.signal } : {});
  }
}

/**
 * The pid of the process holding an embedded data folder, or undefined when it is free, the
 * folder does not exist, or the holder did not say. Takes nothing: a probe for the CLI.
 */
export async function dataDirHolder(dataDir: string, method: LockMethod = process.platform === 'linux' ? 'socket' : 'file'): Promise<number | undefined> {
  let dir: string;
  try {
    dir = realpathSync(dataDir);
  } catch {
    return undefined;
  }
  if (method === 'file') {
    const pid = parsePid(readOrEmpty(lockFilePath(dir)));
    return pid !== undefined && processAlive(pid) ? pid : undefined;
  }
  return socketHolder(socketName(dir));
}

function socketName(dir: string): string {
  // Abstract names live in a flat per-network-namespace space: a hash keeps them unique and short (108 bytes max).
  return `\0harness-pglite-${createHash('sha256').update(dir).digest('hex')}`;
}

async function lockWithSocket(dir: string): Promise<DataDirLock> {
  const name = socketName(dir);
  const server = net.createServer((sock) => {
    sock.on('error', () => undefined); // a prober that hangs up early is not our problem
    sock.end(`${process.pid}\n`);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(name, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw lockedError(dir, await socketHolder(name));
    throw err;
  }
  server.on('error', () => undefined);
  // The lock must not keep a worker alive that has nothing else to do.
  server.unref();
  let released = false;
  return {
    kind: 'socket',
    async release() {
      if (released) return;
      released = true;
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Asks the holder of the socket for its pid; undefined when it does not answer promptly. */
function socketHolder(name: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    let text = '';
    const sock = net.connect(name);
    const done = (pid: number | undefined) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(pid);
    };
    // A holder busy in a long synchronous step (PGlite starting) answers late: do not wait for it.
    const timer = setTimeout(() => done(undefined), 2_000);
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (text += d));
    sock.on('end', () => done(parsePid(text)));
    sock.on('error', () => done(undefined));
  });
}

function parsePid(text: string): number | undefined {
  const pid = Number(text.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** The pid file of a folder: beside it, not inside, so the database never sees a foreign file. */
export function lockFilePath(dir: string): string {
  return `${dir}.lock`;
}

async function lockWithFile(dir: string): Promise<DataDirLock> {
  const file = lockFilePath(dir);
  // Two tries: the second after removing a stale file. Losing that race to another process
  // that removes it too and creates its own is fine: our second O_EXCL create then fails.
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, 'wx');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = parsePid(readOrEmpty(file));
      const stale = pid === undefined ? unwrittenFor(file, 10_000) : pid === process.pid ? !heldFiles.has(file) : !processAlive(pid);
      if (stale && attempt === 0) {
        unlinkQuietly(file);
        continue;
      }
      throw lockedError(dir, pid);
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    heldFiles.add(file);
    // A clean exit leaves no file behind; after a crash the liveness check takes it over.
    const onExit = () => unlinkQuietly(file);
    process.once('exit', onExit);
    let released = false;
    return {
      kind: 'file',
      async release() {
        if (released) return;
        released = true;
        process.off('exit', onExit);
        heldFiles.delete(file);
        unlinkQuietly(file);
      },
    };
  }
}

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return ''; // removed meanwhile, or not yet written: treated as held (no pid to check)
  }
}

/** True when a file without a pid is older than ms: its creator died before writing one. */
function unwrittenFor(file: string, ms: number): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs > ms;
  } catch {
    return false;
  }
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
