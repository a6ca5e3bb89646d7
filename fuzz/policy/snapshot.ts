/**
 * Snapshots of the folders a command can write in the sandbox (/workspace, /tmp, /dev/shm), as
 * the driver takes them with find and md5sum, and the difference between two of them. A file is
 * its type, mode, size, mtime, link target and content hash; atime is left out (reading a file
 * changes it). Paths are read as bytes decoded as UTF-8 (the driver's files are NUL-separated).
 */

export interface Entry {
  type: string;
  mode: string;
  size: string;
  mtime: string;
  link: string;
  hash?: string;
}

export type Snapshot = Map<string, Entry>;

export interface Change {
  kind: 'created' | 'deleted' | 'changed';
  path: string;
  /** For `changed`: which attributes differ (`size 4→0`, `content`, `mode 644→600`). */
  what?: string;
}

const FIELDS = 6;

/** Builds a snapshot from find's `%y\0%m\0%s\0%T@\0%p\0%l\0` records and md5sum -z lines. */
export function parseSnapshot(meta: Buffer, sums: Buffer): Snapshot {
  const snap: Snapshot = new Map();
  const fields = splitNul(meta);
  for (let i = 0; i + FIELDS <= fields.length; i += FIELDS) {
    const [type, mode, size, mtime, path, link] = fields.slice(i, i + FIELDS) as [string, string, string, string, string, string];
    snap.set(path, { type, mode, size, mtime, link });
  }
  for (const line of splitNul(sums)) {
    // "<32 hex>  <path>"
    const m = /^([0-9a-f]{32}) {2}([\s\S]*)$/.exec(line);
    const entry = m && snap.get(m[2]!);
    if (entry) entry.hash = m[1];
  }
  return snap;
}

function splitNul(buf: Buffer): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] !== 0) continue;
    out.push(buf.subarray(start, i).toString('utf8'));
    start = i + 1;
  }
  return out;
}

/** What changed from `before` to `after`, sorted by path. */
export function diffSnapshots(before: Snapshot, after: Snapshot): Change[] {
  const changes: Change[] = [];
  for (const [path, a] of after) {
    const b = before.get(path);
    if (!b) {
      changes.push({ kind: 'created', path });
      continue;
    }
    const what: string[] = [];
    if (a.type !== b.type) what.push(`type ${b.type}→${a.type}`);
    if (a.mode !== b.mode) what.push(`mode ${b.mode}→${a.mode}`);
    if (a.size !== b.size) what.push(`size ${b.size}→${a.size}`);
    if (a.hash !== b.hash && a.type === 'f' && b.type === 'f') what.push('content');
    if (a.link !== b.link) what.push(`link ${b.link}→${a.link}`);
    if (a.mtime !== b.mtime) what.push('mtime');
    if (what.length) changes.push({ kind: 'changed', path, what: what.join(', ') });
  }
  for (const path of before.keys()) {
    if (!after.has(path)) changes.push({ kind: 'deleted', path });
  }
  return changes.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}
