/**
 * The side channel for a model reply's text as it streams: a file per model call under
 * `<HARNESS_HOME>/streams/` that the model activity appends chunks to and removes once the reply
 * is in hand (a few seconds later, so a watcher reads its end); a live view tails it while the
 * call's span runs. Files, because the workers of a task queue and the CLI already share
 * HARNESS_HOME (workspaces, records, the embedded database):
 * no port to open or guard, the same owner-only permissions, nothing to connect to. Best effort
 * by design: history keeps the finished message, so a stream that is lost, cut or never read
 * loses nothing (a worker on another host streams to its own disk; its watchers see the reply
 * when it is done).
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readSync, rmdirSync, rmSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';

/** The stream file of one model call (turn, step, call index). */
export function streamFile(home: string, turnId: string, step: number, callIndex: number): string {
  // Hashed: a turn id is the session's, chosen by whoever started it; it never becomes a path.
  const turn = createHash('sha256').update(turnId).digest('hex').slice(0, 24);
  return path.join(home, 'streams', turn, `s${step}-c${callIndex}.txt`);
}

/** Appends a reply's chunks to its stream file; every failure is swallowed (the stream is extra). */
export class StreamWriter {
  private fd: number | undefined;
  private broken = false;

  constructor(private readonly file: string) {}

  /** Appends a chunk (opening the file, afresh, on the first). */
  write(chunk: string): void {
    if (this.broken || chunk === '') return;
    try {
      if (this.fd === undefined) {
        mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
        this.fd = openSync(this.file, 'w', 0o600);
      }
      writeSync(this.fd, chunk);
    } catch {
      this.broken = true;
    }
  }

  /**
   * Closes the file and removes it a moment later: the reply is in hand (or the attempt failed),
   * history has the rest, and a watcher polling the file reads its last chunks in the meantime.
   */
  done(): void {
    const fd = this.fd;
    this.fd = undefined;
    // Never a failure of the call: at worst a file is left behind (sweepStreams clears those).
    try {
      if (fd !== undefined) closeSync(fd);
    } catch {
      // closed already
    }
    if (this.broken && fd === undefined) return;
    const file = this.file;
    setTimeout(() => removeStream(file), STREAM_LINGER_MS).unref();
  }
}

/** How long a finished reply's stream file stays for watchers that poll it (they read every 50 ms). */
export const STREAM_LINGER_MS = 3_000;

function removeStream(file: string): void {
  for (const step of [() => rmSync(file, { force: true }), () => rmdirSync(path.dirname(file))]) {
    try {
      step();
    } catch {
      // gone already, or a folder other calls still use
    }
  }
}

/**
 * Removes stream files older than `olderThanMs` (a worker killed mid reply leaves its file): a
 * worker does this as it starts. Best effort, like the streams themselves.
 */
export function sweepStreams(home: string, olderThanMs = 10 * 60_000, now = Date.now()): number {
  const root = path.join(home, 'streams');
  let removed = 0;
  let turns: string[];
  try {
    turns = readdirSync(root);
  } catch {
    return 0;
  }
  for (const turn of turns) {
    const dir = path.join(root, turn);
    try {
      for (const f of readdirSync(dir)) {
        const file = path.join(dir, f);
        if (now - statSync(file).mtimeMs > olderThanMs) {
          rmSync(file, { force: true });
          removed++;
        }
      }
      rmdirSync(dir);
    } catch {
      // in use, not a folder, or gone meanwhile
    }
  }
  return removed;
}

/** Reads a stream file as it grows: each poll gives the text added since the last one. */
export class StreamTail {
  private offset = 0;
  private pending = Buffer.alloc(0);

  constructor(private readonly file: string) {}

  /** What was appended since the last read ('' when nothing, or no file yet). */
  read(): string {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      return '';
    }
    try {
      const chunks: Buffer[] = [];
      const buf = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, this.offset);
        if (n <= 0) break;
        chunks.push(Buffer.from(buf.subarray(0, n)));
        this.offset += n;
      }
      // A UTF-8 character cut between two reads waits for its other bytes.
      const all = Buffer.concat([this.pending, ...chunks]);
      const keep = incompleteTail(all);
      this.pending = all.subarray(all.length - keep);
      return all.subarray(0, all.length - keep).toString('utf8');
    } finally {
      closeSync(fd);
    }
  }
}

/** How many bytes at the end of `b` start a UTF-8 character that is not complete yet. */
function incompleteTail(b: Buffer): number {
  for (let i = 1; i <= Math.min(3, b.length); i++) {
    const byte = b[b.length - i]!;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > i ? i : 0;
  }
  return 0;
}
