/**
 * One process at a time starts (or stops) the embedded deployment of a HARNESS_HOME; the
 * others wait for it and then find the server and worker it started.
 *
 * On Linux the lock is a listening Unix socket in the abstract namespace: binding the name
 * is atomic, nothing is left on disk, and the kernel frees the name when the holder dies
 * however it dies, so there is no stale lock to detect. Waiters connect to the holder and
 * learn it is gone when their connection closes. Elsewhere it is a lock file created with
 * O_EXCL semantics (link(2)), holding the holder's pid; a lock whose pid is no longer alive
 * is taken over.
 */
import { createHash, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { UserError } from '../machine/errors';
import { processAlive, readPidFile } from '../machine/pids';

/** What a process says when another one holds the lock: starting, and stopping, both wait this way. */
export const WAITING_FOR_START_LOCK = 'waiting for another harness process to bring up the embedded server …';

/** A held lock; release it in a `finally`. */
interface StartLock {
  release(): Promise<void>;
}

/** How to wait for the lock. */
interface StartLockOptions {
  /** Give up after this long (default 240 s: a holder may wait 60 s for the server and 90 s for the worker). */
  timeoutMs?: number;
  /** Called once when the lock has been held by someone else for `noticeAfterMs`. */
  onWait?: () => void;
  noticeAfterMs?: number;
  /** Default: `abstract` on Linux, `file` elsewhere. */
  mechanism?: 'abstract' | 'file';
}

/** The abstract socket name of a HARNESS_HOME's lock (one per real path, so symlinks agree). */
export function startLockName(home: string): string {
  return `\0harness-start-${createHash('sha256').update(realpathSync(home)).digest('hex')}`;
}

/** The lock file used where abstract sockets do not exist. */
export function startLockFile(home: string): string {
  return path.join(home, 'start.lock');
}

/** Waits until this process holds the start lock of `home`. */
export async function acquireStartLock(home: string, opts: StartLockOptions = {}): Promise<StartLock> {
  mkdirSync(home, { recursive: true });
  let mechanism = opts.mechanism ?? (process.platform === 'linux' ? 'abstract' : 'file');
  const started = Date.now();
  const deadline = started + (opts.timeoutMs ?? 240_000);
  let noticed = false;
  for (;;) {
    let lock: StartLock | undefined;
    if (mechanism === 'abstract') {
      try {
        lock = await tryAbstract(startLockName(home));
      } catch {
        // Abstract sockets unavailable (a sandbox, an unusual kernel): use the file.
        mechanism = 'file';
        continue;
      }
    } else {
      lock = tryFile(startLockFile(home));
    }
    if (lock) return lock;
    if (!noticed && Date.now() - started >= (opts.noticeAfterMs ?? 1_000)) {
      noticed = true;
      opts.onWait?.();
    }
    if (Date.now() >= deadline) {
      throw new UserError(
        `another harness process has been starting or stopping the embedded server for ${Math.round((Date.now() - started) / 1000)}s`,
        'wait for it to finish, or stop it (`pgrep -af harness.js`) and try again',
      );
    }
    if (mechanism === 'abstract') await untilReleased(startLockName(home), Math.min(1_000, deadline - Date.now()));
    else await sleep(200);
  }
}

/** Binds the name; undefined when someone else holds it. */
function tryAbstract(name: string): Promise<StartLock | undefined> {
  return new Promise((resolve, reject) => {
    const waiters = new Set<Socket>();
    const server = createServer((socket) => {
      // Waiters connect only to notice when we are gone; they never send anything.
      waiters.add(socket);
      socket.unref();
      socket.on('error', () => undefined);
      socket.on('close', () => waiters.delete(socket));
    });
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(undefined) : reject(err)));
    server.listen({ path: name }, () => {
      server.unref();
      resolve({
        release: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            for (const w of waiters) w.destroy();
          }),
      });
    });
  });
}

/** Resolves when the holder of `name` lets go (its connection closes) or after `maxMs`. */
async function untilReleased(name: string, maxMs: number): Promise<void> {
  const began = Date.now();
  await new Promise<void>((resolve) => {
    const socket = createConnection({ path: name });
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, maxMs));
    socket.once('close', done);
    socket.once('error', done);
  });
  // A connection refused at once (the holder just let go, or its backlog is full) must not spin.
  if (Date.now() - began < 20) await sleep(50);
}

/** Creates the lock file atomically with our pid in it; takes over a dead holder's file. */
function tryFile(file: string): StartLock | undefined {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, `${process.pid}\n`);
  try {
    // link(2) fails when the name exists, and the file appears with its content complete.
    linkSync(tmp, file);
    return {
      release: async () => {
        if (readPidFile(file) === process.pid) rmSync(file, { force: true });
      },
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  const holder = readPidFile(file);
  if (holder !== undefined && processAlive(holder)) return undefined;
  takeOverStale(file, holder);
  return undefined; // the caller tries again at once
}

/**
 * Moves a dead holder's lock file aside. Two processes may judge the same file stale: the
 * one that moved a file naming a live holder (a newer lock) puts it back.
 */
function takeOverStale(file: string, judged: number | undefined): void {
  const aside = `${file}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    renameSync(file, aside);
  } catch {
    return; // someone else moved it
  }
  let moved: string;
  try {
    moved = readFileSync(aside, 'utf8').trim();
  } catch {
    moved = '';
  }
  const movedPid = /^\d+$/.test(moved) ? Number(moved) : undefined;
  if (movedPid !== judged && movedPid !== undefined && processAlive(movedPid)) {
    try {
      linkSync(aside, file);
    } catch {
      // a third process holds a newer lock already
    }
  }
  rmSync(aside, { force: true });
}
