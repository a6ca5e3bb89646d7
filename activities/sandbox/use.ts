/**
 * Who uses a session's sandbox now, and when it was last used, across every worker of one
 * HARNESS_HOME: what lets the sweeps (pool.ts) stop an idle container or remove an ended
 * session's without ever cutting off a call.
 *
 * Every call into a sandbox holds a lease while it runs: an empty file
 * `<home>/sandbox-use/<session>/<pid>.<n>`, made before the call and removed after it. A sandbox
 * with a live lease is never stopped or removed. Each lease made or removed changes the folder's
 * modification time, so that time is when the sandbox was last used, by any worker.
 *
 * A stop and a call arriving at that moment are ordered by two files: the stopper writes
 * `stopping` and then looks for leases; a call writes its lease and then looks for `stopping`.
 * Whichever looks second sees the other, so either the stopper gives up or the call waits for
 * the stop to be over (and its command starts the container again). Each side's write-then-look
 * is synchronous, so two of one process never interleave.
 *
 * Leases name their process: one of a process that is gone is stale. Our own pid on a lease we
 * do not hold is stale too (a worker restarted in a fresh container often gets the pid its
 * predecessor had), and any lease older than LEASE_MAX_AGE_MS is, whoever wrote it.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { processAlive } from '../../machine/pids';
import { sessionWorkspace } from '../tools/workspace';
import { execsDir, ExecRecords } from './exec-record';

/** No call into a sandbox lasts this long (a command's timeout is at most 10 minutes). */
const LEASE_MAX_AGE_MS = 60 * 60_000;
/** A stop takes seconds; a `stopping` file older than this was left by a stopper that died. */
const STOP_MAX_AGE_MS = 2 * 60_000;
/** How long a call waits for a stop to be over before it goes on anyway. */
const STOP_WAIT_MS = 60_000;
/** A claimed command runs at most its timeout; this much later it has ended, or been killed. */
const COMMAND_END_MARGIN_MS = 60_000;
const STOPPING = 'stopping';

/** The leases and `stopping` files this process holds (full paths). */
const held = new Set<string>();
let seq = 0;

/** `<home>/sandbox-use`: one folder per session whose sandbox was used. */
export function useRoot(home: string): string {
  return path.join(path.resolve(home), 'sandbox-use');
}

/** The session's use folder; throws (like its workspace) on a malformed session id. */
function useDir(home: string, sessionId: string): string {
  sessionWorkspace(home, sessionId);
  return path.join(useRoot(home), sessionId);
}

/** Runs `fn` holding a lease on the session's sandbox, after any stop of it in progress is over. */
export async function withLease<T>(home: string, sessionId: string, fn: () => Promise<T>): Promise<T> {
  const dir = useDir(home, sessionId);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lease = path.join(dir, `${process.pid}.${seq++}`);
  writeFileSync(lease, '', { flag: 'wx', mode: 0o600 });
  held.add(lease);
  try {
    for (const deadline = Date.now() + STOP_WAIT_MS; stopInProgress(dir) && Date.now() < deadline; ) await sleep(50);
    return await fn();
  } finally {
    held.delete(lease);
    rmSync(lease, { force: true });
  }
}

/**
 * Marks the session's sandbox as being stopped, unless a call holds a lease on it; returns the
 * function that ends the stop (undefined when the sandbox is in use or another stop is under way).
 */
export function beginStop(home: string, sessionId: string): (() => void) | undefined {
  const dir = useDir(home, sessionId);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const marker = path.join(dir, STOPPING);
  if (!writeMarker(marker)) {
    if (stopInProgress(dir)) return undefined;
    rmSync(marker, { force: true }); // left by a stopper that is gone
    if (!writeMarker(marker)) return undefined;
  }
  held.add(marker);
  const end = () => {
    held.delete(marker);
    rmSync(marker, { force: true });
  };
  if (liveLeases(home, sessionId) > 0) {
    end();
    return undefined;
  }
  return end;
}

/** The calls running in the session's sandbox now, on any worker of this home. */
export function liveLeases(home: string, sessionId: string, now = Date.now()): number {
  const dir = useDir(home, sessionId);
  let live = 0;
  for (const name of quietly(() => readdirSync(dir)) ?? []) {
    const m = /^(\d+)\.\d+$/.exec(name);
    if (!m) continue;
    const file = path.join(dir, name);
    const st = quietly(() => statSync(file));
    if (!st) continue;
    const pid = Number(m[1]);
    const alive = pid === process.pid ? held.has(file) : processAlive(pid) && now - st.mtimeMs < LEASE_MAX_AGE_MS;
    if (alive) live++;
    else rmSync(file, { force: true });
  }
  return live;
}

/** When the session's sandbox was last used (a call began or ended), as far as this home tells; undefined when never. */
export function lastUsed(home: string, sessionId: string): number | undefined {
  // The exec records' folder changes with every command too: sandboxes made before leases existed.
  const times = [useDir(home, sessionId), execsDir(home, sessionId)].map((d) => quietly(() => statSync(d).mtimeMs));
  const known = times.filter((t): t is number => t !== undefined);
  return known.length ? Math.max(...known) : undefined;
}

/**
 * Whether a command claimed in the session's exec records may still run: no result and no exit
 * status yet, and its timeout (plus a margin) not over. A worker killed mid-command leaves no
 * lease, but its command runs on for the retry to follow.
 */
export async function commandsRunning(home: string, sessionId: string, now = Date.now()): Promise<boolean> {
  const records = new ExecRecords(execsDir(home, sessionId), undefined);
  for (const name of quietly(() => readdirSync(records.dir)) ?? []) {
    const id = /^([0-9a-f]{32})\.claim$/.exec(name)?.[1];
    if (!id || (await records.readResult(id)) || (await records.status(id))) continue;
    const meta = await records.readClaim(id);
    // A claim that cannot be read: as long as a command could last from when it was written.
    const until = meta ? meta.startedAt + meta.timeoutMs : (quietly(() => statSync(path.join(records.dir, name)).mtimeMs) ?? 0) + 10 * 60_000;
    if (now < until + COMMAND_END_MARGIN_MS) return true;
  }
  return false;
}

/** Forgets the session's use folder (its sandbox is gone). */
export function forgetUse(home: string, sessionId: string): void {
  rmSync(useDir(home, sessionId), { recursive: true, force: true });
}

/** Whether a stop of the sandbox whose use folder is `dir` is under way. */
function stopInProgress(dir: string): boolean {
  const marker = path.join(dir, STOPPING);
  const st = quietly(() => statSync(marker));
  if (!st) return false;
  const pid = Number(quietly(() => readFileSync(marker, 'utf8')));
  // Ours while we hold it; another process's while it lives.
  if (pid === process.pid) return held.has(marker);
  return Number.isInteger(pid) && pid > 0 && processAlive(pid) && Date.now() - st.mtimeMs < STOP_MAX_AGE_MS;
}

function writeMarker(marker: string): boolean {
  try {
    writeFileSync(marker, String(process.pid), { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function quietly<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}
