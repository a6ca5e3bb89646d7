/**
 * Following one claimed command to its end, whichever attempt started it: watch its exec
 * record for the status the wrapper writes, kill it by marker at its deadline (or when stopIf
 * asks, or when the call is cancelled), tell "still running" from "gone without a status" by
 * probing the container, and turn what the record holds into the ExecResult. Only the host's view of a command already
 * started lives here; creating the container and the exec is docker-sandbox.ts.
 */
import { performance } from 'node:perf_hooks';
import type Docker from 'dockerode';
import { isGone, isPaused, SandboxError } from './docker-errors';
import type { ExecMeta, ExecRecords, ExecResult } from './exec-record';
import { runProbe, waitUpTo } from './exec-wrapper';

// Beyond the in-container `timeout`, how long before the host kills by marker itself.
const KILL_GRACE_MS = 1_500;
// After a kill by marker, how long the wrapper has to record the exit status.
const AFTER_KILL_MS = 2_000;
/** A claim this young with nothing running may belong to an attempt just about to start it. */
export const START_GRACE_MS = 3_000;
// A follower without the exec's stream looks for the status file this often (a file read)…
const POLL_MS = 100;
// …and asks the container whether the command still runs this often (an exec).
const PROBE_EVERY_MS = 1_000;
// How often stopIf is asked while a command runs.
const WATCH_EVERY_MS = 2_000;

// How a followed command ended: its status (and when it was written), a kill, or nothing left of it.
interface Ending {
  exitCode?: number;
  endedAt?: number;
  killed?: Kill;
  interrupted?: boolean;
}

// Why the host killed a command: its deadline, stopIf, or the call's cancellation.
type Kill = 'timeout' | 'stopped' | 'cancelled';

/** How followExec was started and what it may do. */
interface FollowOptions {
  /** For the attempt that started the command: resolves when its wrapper exited, or when the channel that would have said so closed. */
  ended?: Promise<void>;
  /** This attempt started the command (no start grace needed). */
  own: boolean;
  /** The record is kept (a keyed call); otherwise it is removed after. */
  keep: boolean;
  stopIf?: () => Promise<boolean>;
  /** Aborted when the call is cancelled (one signal per call): the command is killed then, not left to its deadline. */
  cancel?: AbortSignal;
  /** performance.now() at the start, for the duration of an own command. */
  t0?: number;
}

/**
 * Waits for the command of record `id` to end and builds its result: from the status the
 * wrapper wrote, or after killing it at its deadline (or when stopIf asks), or as interrupted
 * when neither the status nor a process of it exists any more.
 */
export async function followExec(container: Docker.Container, records: ExecRecords, id: string, meta: ExecMeta, o: FollowOptions): Promise<ExecResult> {
  const deadline = meta.startedAt + meta.timeoutMs + KILL_GRACE_MS;
  let streamOpen = o.ended !== undefined;
  const ended = o.ended?.then(() => void (streamOpen = false));
  // A cancellation wakes the wait below at once: a command may have minutes left to its deadline.
  const cancel = o.cancel;
  const cancelled = cancel && new Promise<void>((resolve) => cancel.addEventListener('abort', () => resolve(), { once: true }));
  let killed: Kill | undefined;
  let killedAt = 0;
  let killFailed = false;
  let nextWatch = o.stopIf ? Date.now() + WATCH_EVERY_MS : Infinity;
  let nextProbe = 0;
  const finish = (f: Ending) => finishExec(records, id, meta, o, f);
  for (;;) {
    const status = await records.status(id);
    if (status !== undefined) return finish({ exitCode: status.code, endedAt: status.at, killed });
    // Another attempt may have finished the call (and removed the raw files) meanwhile.
    const stored = o.keep ? await records.readResult(id) : undefined;
    if (stored) return stored;
    let now = Date.now();
    if (killed) {
      if (now >= killedAt + AFTER_KILL_MS) {
        if (killFailed) throw new SandboxError('Docker stopped answering while the command ran; its outcome is unknown', { started: true });
        return finish({ exitCode: 137, killed });
      }
    } else {
      let reason: Kill | undefined = cancel?.aborted ? 'cancelled' : now >= deadline ? 'timeout' : undefined;
      if (!reason && now >= nextWatch) {
        reason = (await o.stopIf!().catch(() => false)) ? 'stopped' : undefined;
        nextWatch = Date.now() + WATCH_EVERY_MS;
      }
      if (reason) {
        killed = reason;
        killedAt = Date.now();
        const outcome = await killMarked(container, id);
        if (outcome === 'gone') return finish({ interrupted: true });
        killFailed = outcome === 'failed';
        continue;
      }
    }
    now = Date.now();
    if (!streamOpen && now >= nextProbe) {
      const running = await isRunning(container, id);
      nextProbe = Date.now() + PROBE_EVERY_MS;
      if (running === false && (o.own || now - meta.startedAt >= START_GRACE_MS)) {
        // The wrapper may have recorded the status (or another attempt the result) between the looks.
        if ((await records.status(id)) !== undefined || (o.keep && (await records.readResult(id)))) continue;
        return finish({ interrupted: true });
      }
    }
    const wake = Math.min(killed ? killedAt + AFTER_KILL_MS : Math.min(deadline, nextWatch), streamOpen ? Infinity : Date.now() + POLL_MS);
    // Once killed, the (settled) cancellation no longer wakes it: only the wrapper's end or the time.
    const wakers = [streamOpen ? ended : undefined, killed ? undefined : cancelled].filter((p) => p !== undefined);
    await waitUpTo(wakers.length ? Promise.race(wakers) : undefined, wake - Date.now());
  }
}

/** Builds the result from the record's files; a kept record stores it (first writer wins) and drops the raw files. */
async function finishExec(records: ExecRecords, id: string, meta: ExecMeta, o: FollowOptions, f: Ending): Promise<ExecResult> {
  const { stdout, stderr } = await records.outputs(id, meta.maxOutputBytes);
  // A follower that came late measures to when the status was written, not to its own arrival.
  const durationMs = o.t0 !== undefined ? performance.now() - o.t0 : Math.max(0, (f.endedAt ?? Date.now()) - meta.startedAt);
  const exitCode = f.interrupted ? -1 : (f.exitCode ?? 137);
  const result: ExecResult = {
    exitCode,
    stdout: stdout.text(),
    stderr: stderr.text(),
    truncated: stdout.truncated || stderr.truncated,
    droppedBytes: stdout.droppedBytes + stderr.droppedBytes,
    // `timeout -s KILL` gives 137 (124 on some versions) at the deadline; so does the memory limit, earlier.
    timedOut: f.killed === 'timeout' || (!f.interrupted && !f.killed && durationMs >= meta.timeoutMs && (exitCode === 137 || exitCode === 124)),
    durationMs,
    ...(f.killed === 'stopped' ? { stopped: true } : {}),
    ...(f.interrupted ? { interrupted: true } : {}),
    ...(f.killed === 'cancelled' ? { cancelled: true } : {}),
  };
  if (!o.keep) return result;
  const kept = await records.storeResult(id, result);
  await records.discardOutputs(id);
  return kept;
}

/** SIGKILLs every process of the command (marker HARNESS_EXEC=id), escapees of its process group included. */
async function killMarked(container: Docker.Container, id: string): Promise<'ok' | 'gone' | 'failed'> {
  const script = `for p in /proc/[0-9]*; do grep -qsxzF 'HARNESS_EXEC=${id}' "$p/environ" && kill -9 "\${p##*/}"; done; true`;
  try {
    await runProbe(container, script);
    return 'ok';
  } catch (err) {
    return isGone(err) && !isPaused(err) ? 'gone' : 'failed';
  }
}

/** Whether the wrapper or the command of record `id` still runs; undefined when Docker cannot tell. */
export async function isRunning(container: Docker.Container, id: string): Promise<boolean | undefined> {
  const script = `for p in /proc/[0-9]*; do grep -qsxzE 'HARNESS_(WRAP|EXEC)=${id}' "$p/environ" && { echo running; exit 0; }; done; echo idle`;
  try {
    const out = await runProbe(container, script);
    return out.includes('running') ? true : out.includes('idle') ? false : undefined;
  } catch (err) {
    // Removed, or stopped (a restart ends every process in it): the command is not running.
    return isGone(err) && !isPaused(err) ? false : undefined;
  }
}
