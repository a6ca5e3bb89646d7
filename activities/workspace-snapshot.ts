/**
 * Snapshots of a turn's starting workspace (prepareTurn takes one at every turn's start), and
 * restoring one into a fork's fresh workspace (`harness rerun`, `harness fork`).
 *
 * Why a snapshot, rather than undoing the turn's recorded writes from the workspace as it is
 * now: the record holds what a write wrote, not what the file held before it (an overwrite loses
 * it), and nothing of what run_shell changed or later turns did; a snapshot has all of that.
 * Why in the message store: it is content-addressed per session, so an unchanged file costs one
 * row however many turns see it; any worker can restore it (workspaces are local to one host);
 * `end --purge` and `sessions prune` delete it with the rest of the session's data; and the
 * turn's history names it by one hash. Bounded, so a turn's start stays cheap: at most
 * MAX_FILES files of at most MAX_FILE_BYTES, MAX_BYTES in all, out of MAX_ENTRIES entries
 * looked at; what is left out (also links, FIFOs, devices) is named. What a snapshot cannot hold
 * is everything outside the workspace: the sandbox's packages, processes and other folders,
 * long-term memory, the network's side.
 *
 * The sandbox controls the tree, so the walk never follows a link: folders are held by
 * descriptor and entries opened through them with O_NOFOLLOW (as workspace-usage.ts does).
 */
import { constants } from 'node:fs';
import * as fs from 'node:fs/promises';
import type { SnapshotFile, SnapshotManifest, WorkspaceSnapshot } from '../deterministic/snapshot';
import { Context } from '@temporalio/activity';
import { StoreUnavailableError, type MessageStore, type StoredBlob } from './store/message-store';
import { asStoreError, storeFailure } from './store/errors';
import { sha256 } from './store/conversations';
import { entryPath, locate, openFolder } from './tools/fd-walk';
import { sessionWorkspace, workspaceParts } from './tools/workspace';

/** Bounds of one snapshot. */
export const SNAPSHOT_LIMITS = { files: 2_000, fileBytes: 2 * 1024 ** 2, bytes: 16 * 1024 ** 2, entries: 20_000, depth: 32 };
// Entries named in `left` (the count says how many more).
const LEFT_NAMED = 20;
// Bodies sent to the store per round trip.
const PUT_BATCH_BYTES = 4 * 1024 ** 2;
const GET_BATCH = 200;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** What one walk gathered. */
class Walk {
  files: SnapshotFile[] = [];
  dirs: string[] = [];
  bytes = 0;
  entries = 0;
  left: string[] = [];
  leftCount = 0;
  pending: StoredBlob[] = [];
  pendingBytes = 0;

  leave(path: string, why: string): void {
    this.leftCount++;
    if (this.left.length < LEFT_NAMED) this.left.push(`${path} (${why})`);
  }
}

/**
 * prepareTurn's snapshot: a store that is down is retried like any store write (STORE_UNAVAILABLE);
 * anything else costs only the snapshot (logged), never the turn.
 */
export async function snapshotTurnStart(home: string, sessionId: string, store: () => Promise<MessageStore>): Promise<WorkspaceSnapshot | undefined> {
  try {
    return await takeSnapshot(sessionWorkspace(home, sessionId), sessionId, store);
  } catch (err) {
    const stored = asStoreError(err);
    if (stored instanceof StoreUnavailableError) throw storeFailure(stored);
    Context.current().log.warn(`no snapshot of the workspace of ${sessionId}: ${(err as Error).message.split('\n')[0]}`);
    return undefined;
  }
}

/** Snapshots the workspace at `root` into the session's store; an empty or missing workspace stores nothing. */
export async function takeSnapshot(root: string, sessionId: string, store: () => Promise<MessageStore>): Promise<WorkspaceSnapshot> {
  const dir = await openFolder(root).catch(() => undefined);
  if (!dir) return { files: 0, bytes: 0 };
  const w = new Walk();
  const flush = async () => {
    if (w.pending.length) await (await store()).putBlobs(sessionId, w.pending);
    w.pending = [];
    w.pendingBytes = 0;
  };
  try {
    await walkFolder(dir, '', 0, w, flush);
  } finally {
    await dir.close();
  }
  let manifest: string | undefined;
  if (w.files.length || w.dirs.length) {
    const body = JSON.stringify({ files: w.files, dirs: w.dirs } satisfies SnapshotManifest);
    manifest = sha256(body);
    w.pending.push({ hash: manifest, body });
  }
  await flush();
  return {
    ...(manifest ? { manifest } : {}),
    files: w.files.length,
    bytes: w.bytes,
    ...(w.leftCount ? { left: w.left, leftCount: w.leftCount } : {}),
  };
}

async function walkFolder(dir: fs.FileHandle, rel: string, depth: number, w: Walk, flush: () => Promise<void>): Promise<void> {
  // Sorted, so the same tree always gives the same manifest (and hash).
  const names = (await fs.readdir(entryPath(dir, '.')).catch(() => [] as string[])).sort();
  for (const name of names) {
    const p = rel ? `${rel}/${name}` : name;
    if (++w.entries > SNAPSHOT_LIMITS.entries) {
      w.leave(p, `the snapshot looks at ${SNAPSHOT_LIMITS.entries} entries at most; this and the rest were left out`);
      return;
    }
    const st = await fs.lstat(entryPath(dir, name)).catch(() => undefined);
    if (!st) continue; // removed meanwhile
    if (st.isDirectory()) {
      if (depth >= SNAPSHOT_LIMITS.depth) {
        w.leave(p, `nested deeper than ${SNAPSHOT_LIMITS.depth} folders`);
        continue;
      }
      // O_NOFOLLOW on the component: a folder swapped for a link since the lstat is not entered.
      const sub = await openFolder(entryPath(dir, name)).catch(() => undefined);
      if (!sub) {
        w.leave(p, 'a folder that could not be opened');
        continue;
      }
      w.dirs.push(p);
      try {
        await walkFolder(sub, p, depth + 1, w, flush);
      } finally {
        await sub.close();
      }
      if (w.entries > SNAPSHOT_LIMITS.entries) return;
    } else if (st.isFile()) {
      await takeFile(dir, name, p, w);
      if (w.pendingBytes >= PUT_BATCH_BYTES) await flush();
    } else {
      w.leave(p, st.isSymbolicLink() ? 'a symbolic link' : 'not a regular file');
    }
  }
}

async function takeFile(dir: fs.FileHandle, name: string, p: string, w: Walk): Promise<void> {
  const handle = await fs.open(entryPath(dir, name), READ_FLAGS).catch(() => undefined);
  if (!handle) return w.leave(p, 'a file that could not be read');
  try {
    const st = await handle.stat();
    if (!st.isFile()) return w.leave(p, 'not a regular file');
    if (w.files.length >= SNAPSHOT_LIMITS.files) return w.leave(p, `the snapshot holds ${SNAPSHOT_LIMITS.files} files at most`);
    if (st.size > SNAPSHOT_LIMITS.fileBytes) return w.leave(p, `over ${SNAPSHOT_LIMITS.fileBytes / 1024 ** 2} MiB`);
    // Read through the checked handle, bounded: the file may grow while we read.
    const buf = Buffer.alloc(Math.min(st.size + 1, SNAPSHOT_LIMITS.fileBytes + 1));
    let n = 0;
    while (n < buf.length) {
      const { bytesRead } = await handle.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    if (n > SNAPSHOT_LIMITS.fileBytes) return w.leave(p, `over ${SNAPSHOT_LIMITS.fileBytes / 1024 ** 2} MiB`);
    if (w.bytes + n > SNAPSHOT_LIMITS.bytes) return w.leave(p, `the snapshot holds ${SNAPSHOT_LIMITS.bytes / 1024 ** 2} MiB at most`);
    const data = buf.subarray(0, n);
    const text = data.toString('utf8');
    // Text is stored as it is (readable in the store); anything else in base64.
    const utf8 = Buffer.from(text, 'utf8').equals(data);
    const body = utf8 ? text : data.toString('base64');
    const hash = sha256(body);
    w.files.push({ path: p, hash, ...(utf8 ? {} : { b64: true as const }), ...(st.mode & 0o100 ? { x: true as const } : {}) });
    w.bytes += n;
    w.pending.push({ hash, body });
    w.pendingBytes += body.length;
  } finally {
    await handle.close();
  }
}

/** What restoring a snapshot did: files written, and what could not be. */
interface Restored {
  files: number;
  problems: string[];
}

/**
 * Writes a snapshot of session `from` into the workspace at `root` (a fork's, fresh): folders,
 * then files with their content and executable bit. What the snapshot left out is a problem to
 * report, as is a file that would not write.
 */
export async function restoreSnapshot(root: string, from: string, snap: WorkspaceSnapshot, store: () => Promise<MessageStore>): Promise<Restored> {
  const problems = (snap.left ?? []).map((l) => `${l}: not in the snapshot of the turn's start`);
  if (snap.leftCount && snap.leftCount > (snap.left?.length ?? 0)) problems.push(`${snap.leftCount - snap.left!.length} more entries not in the snapshot of the turn's start`);
  if (!snap.manifest) return { files: 0, problems };
  const s = await store();
  const stored = (await s.getBlobs(from, [snap.manifest])).get(snap.manifest);
  if (stored === undefined) return { files: 0, problems: [...problems, `the snapshot of the turn's start is missing from the store of ${from} (was it purged?)`] };
  const manifest = JSON.parse(stored) as SnapshotManifest;
  await fs.mkdir(root, { recursive: true });
  for (const d of manifest.dirs) {
    // The manifest's own paths, checked like a model's (never absolute, never `..`).
    workspaceParts(d);
    await fs.mkdir(`${root}/${d}`, { recursive: true });
  }
  let files = 0;
  for (let i = 0; i < manifest.files.length; i += GET_BATCH) {
    const batch = manifest.files.slice(i, i + GET_BATCH);
    const bodies = await s.getBlobs(from, [...new Set(batch.map((f) => f.hash))]);
    for (const f of batch) {
      const body = bodies.get(f.hash);
      if (body === undefined) {
        problems.push(`${f.path}: its content is missing from the store`);
        continue;
      }
      const why = await writeOne(root, f, Buffer.from(body, f.b64 ? 'base64' : 'utf8'));
      if (why) problems.push(`${f.path}: ${why}`);
      else files++;
    }
  }
  return { files, problems };
}

/** Writes one file through the workspace's confined opener (no link below the root is followed). */
async function writeOne(root: string, f: SnapshotFile, data: Buffer): Promise<string | undefined> {
  try {
    const loc = await locate(root, f.path, { createFolders: true });
    try {
      const h = await loc.open(constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, f.x ? 0o755 : 0o644);
      try {
        await h.writeFile(data);
        await h.chmod(f.x ? 0o755 : 0o644);
      } finally {
        await h.close();
      }
    } finally {
      await loc.close();
    }
    return undefined;
  } catch (err) {
    return (err as Error).message.split('\n')[0];
  }
}
