/**
 * Exec records: what lets a run_shell call run at most once per call key, even when the worker
 * running it dies and Temporal retries the activity elsewhere while the container still runs
 * the command. One host folder per session, `<home>/execs/<session>` (outside the workspace),
 * is mounted into the container at EXEC_MOUNT. For the call whose key hashes to `<id>`:
 *
 *   <id>.claim   meta (JSON), created exclusively before the command starts. Once it exists
 *                the command may have run, so no attempt ever starts it again.
 *   <id>/        written by the in-container wrapper: `out` and `err` (the command's output)
 *                and, when it ends, `status` (its exit code and a newline, in one small
 *                write: read as written only once the newline is there).
 *   <id>.result  the ExecResult the host built from those, created exclusively: whichever
 *                attempt finishes first wins and every later one returns that result.
 *
 * The container is untrusted and can write into `<id>/` (and, when it runs as the worker's
 * own user, anywhere in the folder), so the host never follows a symbolic link here: files are
 * opened with O_NOFOLLOW, `<id>/` is opened once and its entries are reached through
 * /proc/self/fd/<fd>, nothing is read past a size cap, and removal never recurses into a
 * folder the container could swap for a link.
 *
 * The operations on a command's way (claim, status, outputs, result, cleanup) use synchronous
 * calls: each takes microseconds on a local disk, while through libuv's thread pool every one
 * was a round trip of its own (about 4 ms of a warm command's records, now well under one).
 * Output is read head and tail only, so no call reads more than twice the output cap.
 */
import { chmodSync, chownSync, closeSync, constants, fstatSync, linkSync, lstatSync, mkdirSync, openSync, readdirSync, readSync, rmdirSync, unlinkSync, writeFileSync, type Stats } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { sessionWorkspace } from '../tools/workspace';
import { OutputCapture } from './output';

/** What the host records before starting a command, so any later attempt can follow it. */
export interface ExecMeta {
  v: 1;
  /** The call key, for people reading the folder. */
  key: string;
  /** sha256 of the command, so a record is never taken for another command's. */
  commandSha: string;
  timeoutMs: number;
  maxOutputBytes: number;
  /** Wall clock (ms) when the record was claimed, just before the command started. */
  startedAt: number;
}

/** What one command produced; output is capped per stream (head and tail kept). Stored as is in a record. */
export interface ExecResult {
  /** The exit code; -1 when interrupted (unknown). */
  exitCode: number;
  stdout: string;
  stderr: string;
  truncated: boolean;
  droppedBytes: number;
  timedOut: boolean;
  durationMs: number;
  /** Killed because the caller's stopIf asked for it (e.g. the workspace went over budget). */
  stopped?: boolean;
  /** An earlier attempt started the command and was cut off with it (container gone or restarted): it may have partly run. */
  interrupted?: boolean;
  /** Killed because the call was cancelled (the turn it belonged to was cancelled). */
  cancelled?: boolean;
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
// Small files the host reads back; anything larger was not written by the harness.
const META_CAP = 1 << 20;
const STATUS_CAP = 64;
// /proc/self/fd/<fd> pins an opened folder (Linux); elsewhere only the last component is guarded.
const PASS_THROUGH = process.platform === 'linux';

/** `<home>/execs/<sessionId>`; throws (like the workspace) on a malformed session id. */
export function execsDir(home: string, sessionId: string): string {
  sessionWorkspace(home, sessionId);
  return path.join(path.resolve(home), 'execs', sessionId);
}

/** The record id of a call key: hex, safe as a file name and inside a shell word. */
export function recordId(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 32);
}

/** A fresh id for a call without a key (a direct call: nothing to deduplicate). */
export function oneShotId(): string {
  return `x${randomBytes(16).toString('hex')}`;
}

/** sha256 of a command, as stored in ExecMeta. */
export function commandSha(cmd: string): string {
  return createHash('sha256').update(cmd).digest('hex');
}

/** The exec records of one session. */
export class ExecRecords {
  constructor(
    readonly dir: string,
    /** The sandbox user, who must be able to write into each record's output folder. */
    private readonly sandboxUser: { uid: number; gid: number } | undefined,
  ) {}

  /** Creates the session folder (not writable by the sandbox user when the worker is root). */
  async ensure(): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true, mode: 0o755 });
  }

  /**
   * Prepares `<id>/` and claims the record: true when this caller owns the call now, false when
   * some attempt claimed it before (then follow that one, never start the command).
   */
  async claim(id: string, meta: ExecMeta): Promise<boolean> {
    await this.prepareOutputDir(id);
    return this.createExclusive(`${id}.claim`, JSON.stringify(meta));
  }

  /** Prepares `<id>/` for a call that is not recorded (no key): the wrapper needs it all the same. */
  async prepareOutputDir(id: string): Promise<void> {
    const out = path.join(this.dir, id);
    try {
      mkdirSync(out, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const own = process.getuid?.();
    const u = this.sandboxUser;
    if (!u || own === undefined || u.uid === own) return;
    // The folder is the sandbox user's own, so it can write its output there and nowhere else.
    if (own === 0) chownSync(out, u.uid, u.gid);
    else chmodSync(out, 0o777);
  }

  /** The claim's meta; null when a claim exists but cannot be read; undefined when unclaimed. */
  async readClaim(id: string): Promise<ExecMeta | null | undefined> {
    const read = readSmall(path.join(this.dir, `${id}.claim`), META_CAP);
    if (read === undefined) return undefined;
    try {
      const meta = JSON.parse(read.text) as ExecMeta;
      return meta?.v === 1 && typeof meta.timeoutMs === 'number' && typeof meta.startedAt === 'number' ? meta : null;
    } catch {
      return null;
    }
  }

  /** The stored outcome, if an attempt finished the call. */
  async readResult(id: string): Promise<ExecResult | undefined> {
    const read = readSmall(path.join(this.dir, `${id}.result`), META_CAP * 16);
    if (read === undefined) return undefined;
    try {
      const r = JSON.parse(read.text) as ExecResult;
      return typeof r?.exitCode === 'number' && typeof r.stdout === 'string' && typeof r.stderr === 'string' ? r : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stores the outcome unless another attempt stored one first; returns the one that counts. */
  async storeResult(id: string, result: ExecResult): Promise<ExecResult> {
    if (await this.createExclusive(`${id}.result`, JSON.stringify(result))) return result;
    return (await this.readResult(id)) ?? result;
  }

  /** The exit status the wrapper wrote when the command ended, and when (ms), if it did. */
  async status(id: string): Promise<{ code: number; at: number } | undefined> {
    const read = this.inOutputDir(id, (base) => readSmall(`${base}/status`, STATUS_CAP));
    // Written in one small write: whole once it ends in a newline, and empty or absent before.
    const t = read?.text.endsWith('\n') ? read.text.trim() : undefined;
    return t && /^\d{1,3}$/.test(t) ? { code: Number(t), at: read!.mtimeMs } : undefined;
  }

  /** Whether the wrapper left anything in `<id>/` (output files or a status): it started. */
  async touched(id: string): Promise<boolean> {
    return this.inOutputDir(id, (base) => ['out', 'err', 'status'].some((name) => quietly(() => lstatSync(`${base}/${name}`)) !== undefined)) ?? false;
  }

  /** stdout and stderr so far, head and tail kept within `maxBytes` each (empty when missing). */
  async outputs(id: string, maxBytes: number): Promise<{ stdout: OutputCapture; stderr: OutputCapture }> {
    const read = this.inOutputDir(id, (base) => ({
      stdout: captureFile(`${base}/out`, maxBytes),
      stderr: captureFile(`${base}/err`, maxBytes),
    }));
    return read ?? { stdout: new OutputCapture(maxBytes), stderr: new OutputCapture(maxBytes) };
  }

  /** Removes `<id>/` (the raw output); the claim and the result stay. */
  async discardOutputs(id: string): Promise<void> {
    this.inOutputDir(id, (base) => {
      for (const name of quietly(() => readdirSync(base)) ?? []) {
        // rmdir for a folder the container made (only when empty): never a recursive walk.
        if (quietly(() => unlinkSync(`${base}/${name}`)) === undefined) quietly(() => rmdirSync(`${base}/${name}`));
      }
    });
    if (quietly(() => rmdirSync(path.join(this.dir, id))) === undefined) quietly(() => unlinkSync(path.join(this.dir, id)));
  }

  /** Removes everything of one record (calls without a key leave nothing behind). */
  async forget(id: string): Promise<void> {
    await this.discardOutputs(id);
    for (const suffix of ['.claim', '.result']) quietly(() => unlinkSync(path.join(this.dir, `${id}${suffix}`)));
  }

  /** Forgets records claimed more than `ageMs` ago: no retry of their activity can still come. */
  async prune(ageMs: number): Promise<void> {
    const names = await fs.readdir(this.dir).catch(() => [] as string[]);
    const cutoff = Date.now() - ageMs;
    for (const name of names) {
      const st: Stats | undefined = await fs.lstat(path.join(this.dir, name)).catch(() => undefined);
      if (!st || st.mtimeMs > cutoff) continue;
      if (name.endsWith('.tmp')) await fs.unlink(path.join(this.dir, name)).catch(() => undefined);
      const m = /^([0-9a-fx]+)(\.claim|\.result)?$/.exec(name);
      if (m) await this.forget(m[1]!);
    }
  }

  /** Removes the whole folder; only when the container is gone (nothing can race the walk). */
  async removeAll(): Promise<void> {
    await fs.rm(this.dir, { recursive: true, force: true });
  }

  // Writes a temporary file and links it to `name`: the file appears whole, and only once.
  private async createExclusive(name: string, content: string): Promise<boolean> {
    const tmp = path.join(this.dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
    writeFileSync(tmp, content, { flag: 'wx', mode: 0o644 });
    try {
      linkSync(tmp, path.join(this.dir, name));
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    } finally {
      quietly(() => unlinkSync(tmp));
    }
  }

  // Runs fn with a path to `<id>/` that cannot be redirected; undefined when it is missing or not a folder.
  private inOutputDir<T>(id: string, fn: (base: string) => T): T | undefined {
    const fd = quietly(() => openSync(path.join(this.dir, id), DIR_FLAGS));
    if (fd === undefined) return undefined;
    try {
      return fn(PASS_THROUGH ? `/proc/self/fd/${fd}` : path.join(this.dir, id));
    } finally {
      closeSync(fd);
    }
  }
}

/** fn's value, or undefined when it throws (a file that is missing, or not what it should be). */
function quietly<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

/** A regular file's text and mtime, or undefined when it is missing, a link, not a file, or over `cap`. */
function readSmall(file: string, cap: number): { text: string; mtimeMs: number } | undefined {
  const fd = quietly(() => openSync(file, READ_FLAGS));
  if (fd === undefined) return undefined;
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > cap) return undefined;
    const buf = Buffer.alloc(st.size);
    const bytesRead = readSync(fd, buf, 0, st.size, 0);
    return { text: buf.subarray(0, bytesRead).toString('utf8'), mtimeMs: st.mtimeMs };
  } finally {
    closeSync(fd);
  }
}

/** The head and tail of a (possibly huge) output file, read without loading the middle. */
function captureFile(file: string, maxBytes: number): OutputCapture {
  const capture = new OutputCapture(maxBytes);
  const fd = quietly(() => openSync(file, READ_FLAGS));
  if (fd === undefined) return capture;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return capture;
    const read = (length: number, position: number) => {
      const buf = Buffer.alloc(length);
      return buf.subarray(0, readSync(fd, buf, 0, length, position));
    };
    if (st.size <= maxBytes) {
      capture.push(read(st.size, 0));
    } else {
      capture.push(read(capture.headMax, 0));
      capture.skip(st.size - capture.headMax - capture.tailMax);
      capture.push(read(capture.tailMax, st.size - capture.tailMax));
    }
    return capture;
  } finally {
    closeSync(fd);
  }
}
