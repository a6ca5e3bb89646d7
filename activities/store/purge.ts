/**
 * Retention on the worker: deleting what a session stored — its message-store rows, its
 * sandbox container, and its folders under HARNESS_HOME (workspace, exec records, applied-write
 * records, scripted-model script). Never long-term memory: that belongs to a namespace, not to
 * a session. Only the worker holds HARNESS_HOME and the store, so clients reach this through
 * workflows (sessionWorkflow on `end --purge`, purgeWorkflow for `sessions prune`).
 *
 * Folders are removed without following symbolic links: every folder is opened with
 * O_NOFOLLOW and entries are deleted relative to the descriptor of the folder that holds them
 * (fd-walk.ts), so a link is deleted itself, never what it points to, even if a process swaps
 * a folder for a link while the removal runs. The container goes first for the same reason.
 */
import type { FileHandle } from 'node:fs/promises';
import * as fs from 'node:fs/promises';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { SESSION_ID, errnoCode } from '../tools/workspace';
import { entryPath, openFolder } from '../tools/fd-walk';
import type { MessageStore } from './message-store';
import { withStore } from './errors';

/** What purging one session deleted. */
export interface PurgeReport {
  sessionId: string;
  /** Rows deleted from the message store. */
  storeRows: number;
  /** What was deleted under HARNESS_HOME, relative to it (`workspaces/<id>`, `execs/<id>`, `applied/<id>`, `scripts/<id>.json`). */
  removed: string[];
  /** False when Docker did not answer: the worker's start-up sweep removes an ended session's container later. */
  sandboxRemoved: boolean;
  /** What could not be deleted, one line each (e.g. a folder reached through a symbolic link, which is left alone). */
  problems: string[];
}

/** What purging needs from the worker. */
export interface RetentionDeps {
  /** HARNESS_HOME of the worker. */
  home: string;
  messages: () => Promise<MessageStore>;
  sandboxes: { remove(sessionId: string): Promise<void> };
}

/** The activities of retention, registered with the others by createActivities. */
export function createRetentionActivities(deps: RetentionDeps) {
  return {
    /** Deletes what a session stored (see PurgeReport); an unavailable store is a retryable STORE_UNAVAILABLE. */
    async purgeSession(input: { sessionId: string }): Promise<PurgeReport> {
      const ctx = Context.current();
      return withStore(() => purgeSessionData(deps, input.sessionId, () => ctx.heartbeat()));
    },

    /** Sessions whose last write to the message store is older than `before` (an ISO time). */
    async storedSessionsIdleSince(input: { before: string }): Promise<string[]> {
      const before = new Date(input.before);
      if (Number.isNaN(before.getTime())) throw new TypeError(`not a time: ${JSON.stringify(input.before)}`);
      return withStore(async () => (await deps.messages()).sessionsIdleSince(before));
    },
  };
}

// Per session, relative to HARNESS_HOME; each names the session by its validated id.
const sessionPaths = (id: string): string[][] => [
  ['workspaces', id],
  ['execs', id],
  ['applied', id],
  ['scripts', `${id}.json`], // ScriptedModels's file: encodeURIComponent leaves a valid id as it is
];

/**
 * Purges one session (idempotent: a retry finds less to delete). The store goes first, so a
 * store that is down fails the call before anything else changes and the retry reports all.
 */
export async function purgeSessionData(deps: RetentionDeps, sessionId: string, beat: () => void = () => undefined): Promise<PurgeReport> {
  const report: PurgeReport = { sessionId, storeRows: 0, removed: [], sandboxRemoved: false, problems: [] };
  report.storeRows = await (await deps.messages()).purge(sessionId);
  // A folder is named by the id: anything else (`..`, `/`) must never reach a path.
  if (typeof sessionId !== 'string' || !SESSION_ID.test(sessionId)) {
    report.problems.push(`${JSON.stringify(sessionId)} is not a valid session id: no folder or container removed`);
    return report;
  }
  let home: string;
  try {
    home = await fs.realpath(deps.home); // the operator's choice of folder may itself be a link
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') report.problems.push(`${deps.home}: ${(err as Error).message}`);
    home = '';
  }
  const paths = sessionPaths(sessionId);
  // Removing the container also removes its exec records: what was there is reported either way.
  const existed = new Set<string>();
  if (home) for (const parts of paths) if (await present(home, parts)) existed.add(parts.join('/'));
  try {
    await deps.sandboxes.remove(sessionId);
    report.sandboxRemoved = true;
  } catch {
    // Docker gone or absent: the container (if any) is an orphan the next worker start removes.
  }
  if (!home) return report;
  for (const parts of paths) {
    const rel = parts.join('/');
    try {
      if ((await removeBelow(home, parts, beat)) || (existed.has(rel) && !(await present(home, parts)))) report.removed.push(rel);
    } catch (err) {
      report.problems.push(`${rel} not removed: ${(err as Error).message}`);
    }
  }
  return report;
}

/** Whether the entry exists (a link counts as itself); only for reporting, never to decide a removal. */
async function present(root: string, parts: string[]): Promise<boolean> {
  return fs.lstat(path.join(root, ...parts)).then(
    () => true,
    () => false,
  );
}

/** Removes `parts` below the folder `root`, never through a link; false when it was not there. */
async function removeBelow(root: string, parts: string[], beat: () => void): Promise<boolean> {
  let dir = await openFolder(root);
  try {
    for (const name of parts.slice(0, -1)) {
      let next: FileHandle;
      try {
        next = await openFolder(entryPath(dir, name));
      } catch (err) {
        if (errnoCode(err) === 'ENOENT') return false;
        if (errnoCode(err) === 'ELOOP' || errnoCode(err) === 'ENOTDIR') throw new Error(`${name} is a symbolic link or not a folder; nothing behind it is touched`);
        throw err;
      }
      await dir.close();
      dir = next;
    }
    return await removeEntry(dir, parts[parts.length - 1]!, { beat, entries: 0 });
  } finally {
    await dir.close();
  }
}

// A folder that keeps changing under the removal (a process still writing) is retried this often.
const MAX_TRIES = 5;

/** Removes the entry `name` of the folder held by `dir`, recursively; false when it was not there. */
async function removeEntry(dir: FileHandle, name: string, progress: { beat: () => void; entries: number }): Promise<boolean> {
  const at = entryPath(dir, name);
  for (let attempt = 1; ; attempt++) {
    if (++progress.entries % 500 === 0) progress.beat();
    try {
      const st = await fs.lstat(at);
      // A link or a file is unlinked itself: unlink never follows the last component.
      if (!st.isDirectory()) {
        await fs.unlink(at);
        return true;
      }
      const sub = await openFolder(at);
      try {
        for (const child of await fs.readdir(`/proc/self/fd/${sub.fd}`)) await removeEntry(sub, child, progress);
      } finally {
        await sub.close();
      }
      await fs.rmdir(at);
      return true;
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT') return attempt > 1; // gone meanwhile (or never there)
      // Swapped for a link or a file after the lstat, or refilled before the rmdir: look again.
      if ((code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENOTEMPTY' || code === 'EISDIR') && attempt < MAX_TRIES) continue;
      throw err;
    }
  }
}
