/**
 * One hardened Docker container per session, driven through the Docker Engine API (dockerode;
 * never the docker CLI per call). The session workspace is bind-mounted at /workspace, so
 * the host file tools and the commands see the same files.
 *
 * A command runs at most once per call key. A small sh wrapper inside the container sends its
 * output to files in the session's exec records (exec-record.ts, mounted at EXEC_MOUNT) and
 * writes its exit status there when it ends, so the outcome outlives the worker that started
 * it: an attempt that finds the call already claimed follows the record (waits for the
 * command, or returns its result) and never starts the command again.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Duplex } from 'node:stream';
import Docker from 'dockerode';
import { ensureWorkspace } from '../tools/workspace';
import { DEFAULT_SANDBOX_IMAGE, isGone, isPaused, SandboxError, statusOf, toSandboxError } from './docker-errors';
import { containerName, containerSpec, DEFAULT_LIMITS, EXEC_MOUNT, LABELS, type ReadOnlyMount, type SandboxLimits } from './containers';
import { commandSha, ExecRecords, execsDir, oneShotId, recordId, type ExecMeta, type ExecResult } from './exec-record';

export type { ExecResult } from './exec-record';
import { adoptTree, canAdopt } from './ownership';
import { endOf, runProbe, waitUpTo, WRAPPER } from './exec-wrapper';

export { DEFAULT_SANDBOX_IMAGE, SandboxError } from './docker-errors';
export { containerName, DEFAULT_LIMITS, EXEC_MOUNT, LABELS, removeOrphans, sandboxProblems, type ReadOnlyMount, type SandboxLimits } from './containers';

/** Per-stream output cap when the caller gives none. */
export const DEFAULT_MAX_OUTPUT_BYTES = 20_000;
// Beyond the in-container `timeout`, how long before the host kills by marker itself.
const KILL_GRACE_MS = 1_500;
// After a kill by marker, how long the wrapper has to record the exit status.
const AFTER_KILL_MS = 2_000;
// A claim this young with nothing running may belong to an attempt just about to start it.
const START_GRACE_MS = 3_000;
// A follower without the exec's stream looks for the status file this often (a file read)…
const POLL_MS = 100;
// …and asks the container whether the command still runs this often (an exec).
const PROBE_EVERY_MS = 1_000;
// How often stopIf is asked while a command runs.
const WATCH_EVERY_MS = 2_000;
// Retries of a call come within its activity's bounded attempts; a day is far beyond them.
const RECORD_TTL_MS = 24 * 3_600_000;
const PRUNE_EVERY_MS = 3_600_000;

/** How to run one command. */
export interface ExecOptions {
  timeoutMs: number;
  maxOutputBytes?: number;
  /** Names the call (`<turnId>/<callId>`): the command runs at most once per key, across workers. */
  key?: string;
  /** Asked every few seconds while the command runs; true kills it (the result says `stopped`). */
  stopIf?: () => Promise<boolean>;
}

/** A place to run shell commands for one session. */
export interface Sandbox {
  exec(cmd: string, opts: ExecOptions): Promise<ExecResult>;
  ensure(): Promise<void>;
  remove(): Promise<void>;
  /** Host tools changed workspace files; lets the sandbox hand them to its user before the next command. */
  hostWrote?(): void;
  /** The largest file a command may write (for messages), when the sandbox has such a limit. */
  readonly fileSizeLimitBytes?: number;
}

/** Options of a DockerSandbox; only home and sessionId are required. */
export interface DockerSandboxOptions {
  home: string;
  sessionId: string;
  docker?: Docker;
  image?: string;
  limits?: Partial<SandboxLimits>;
  /** "uid:gid" inside the container; default 1000:1000 for a root worker, else the worker's own ids. */
  user?: string;
  /** Host folders mounted read-only (skills at /skills/<name>); a container made without them is recreated. */
  skillsMounts?: readonly ReadOnlyMount[];
}

// How a followed command ended: its status (and when it was written), a kill, or nothing left of it.
interface Ending {
  exitCode?: number;
  endedAt?: number;
  killed?: 'timeout' | 'stopped';
  interrupted?: boolean;
}

// How follow() was started and what it may do.
interface FollowOptions {
  /** The attached exec stream of the attempt that started the command (ends when the wrapper exits). */
  stream?: Duplex;
  /** This attempt started the command (no start grace needed). */
  own: boolean;
  /** The record is kept (a keyed call); otherwise it is removed after. */
  keep: boolean;
  stopIf?: () => Promise<boolean>;
  /** performance.now() at the start, for the duration of an own command. */
  t0?: number;
}

/** The hardened container of one session, created on first use and reused after that. */
export class DockerSandbox implements Sandbox {
  readonly docker: Docker;
  readonly image: string;
  readonly name: string;
  private readonly limits: SandboxLimits;
  private readonly user: string;
  private container?: Docker.Container;
  private opening?: Promise<Docker.Container>;
  private ownershipDirty = true;
  private recordsReady?: Promise<ExecRecords>;
  private lastPrune = 0;

  constructor(private readonly opts: DockerSandboxOptions) {
    this.docker = opts.docker ?? new Docker();
    this.image = opts.image ?? DEFAULT_SANDBOX_IMAGE;
    this.name = containerName(opts.sessionId);
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    const own = process.getuid && process.getuid() !== 0 ? `${process.getuid()}:${process.getgid!()}` : '1000:1000';
    this.user = opts.user ?? own;
  }

  /** The file-size limit (RLIMIT_FSIZE) of the session container. */
  get fileSizeLimitBytes(): number {
    return this.limits.fileSizeBytes;
  }

  /** Creates (or finds and starts) the session container. */
  async ensure(): Promise<void> {
    await this.ready();
  }

  /** Marks workspace files as possibly root-owned: the next exec hands them to the sandbox user. */
  hostWrote(): void {
    this.ownershipDirty = true;
  }

  /**
   * Runs `bash --noprofile --norc -c cmd` (COMMAND_SHELL) in /workspace; kills it at timeoutMs. With a key, at most once per
   * key: a call already claimed is followed (its stored result, or the running command waited
   * for), never started again. Throws SandboxError only; `started` says whether it may have run.
   */
  async exec(cmd: string, opts: ExecOptions): Promise<ExecResult> {
    const records = await this.records();
    const keep = opts.key !== undefined;
    const id = opts.key !== undefined ? recordId(opts.key) : oneShotId();
    if (keep) {
      const earlier = await this.resume(records, id, cmd, opts);
      if (earlier) return earlier;
    }
    // Nothing ran for this call yet: every failure until the exec starts may be retried.
    const { container, exec } = await this.prepare(id, cmd, opts.timeoutMs);
    // Taken after the (possibly slow) container start: the deadline counts from the command's start.
    const meta: ExecMeta = {
      v: 1,
      key: opts.key ?? '',
      commandSha: commandSha(cmd),
      timeoutMs: opts.timeoutMs,
      maxOutputBytes: opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
      startedAt: Date.now(),
    };
    try {
      if (!keep) await records.prepareOutputDir(id);
      else if (!(await records.claim(id, meta))) {
        // Another attempt of this call claimed it meanwhile: follow that one (this exec never starts).
        const theirs = await this.resume(records, id, cmd, opts);
        if (theirs) return theirs;
        throw new SandboxError('the exec record of this call vanished while being claimed', { started: true });
      }
    } catch (err) {
      if (err instanceof SandboxError) throw err;
      throw new SandboxError(`cannot write the exec record in ${records.dir}: ${(err as Error).message}`);
    }
    const t0 = performance.now();
    let stream: Duplex | undefined;
    try {
      stream = await exec.start({ hijack: true, stdin: false });
      // The wrapper prints nothing; reading keeps the stream flowing until it ends.
      stream.resume();
    } catch {
      // Whether the command started is for the record to tell, never for a retry to guess.
    }
    try {
      return await this.follow(container, records, id, meta, { stream, own: true, keep, stopIf: opts.stopIf, t0 });
    } finally {
      stream?.destroy();
      if (!keep) await records.forget(id).catch(() => undefined);
      this.maybePrune(records);
    }
  }

  /** Removes the container (force) and the session's exec records; the workspace folder stays. */
  async remove(): Promise<void> {
    this.container = undefined;
    await this.docker
      .getContainer(this.name)
      .remove({ force: true })
      .catch((err: unknown) => {
        if (statusOf(err) !== 404) throw toSandboxError(err, this.image);
      });
    // The container is gone, so nothing can race this recursive removal.
    await fs.rm(execsDir(this.opts.home, this.opts.sessionId), { recursive: true, force: true });
  }

  /** The stored outcome, or the outcome of the claimed command followed; undefined when unclaimed. */
  private async resume(records: ExecRecords, id: string, cmd: string, opts: ExecOptions): Promise<ExecResult | undefined> {
    const stored = await records.readResult(id);
    if (stored) return stored;
    const claim = await records.readClaim(id);
    if (claim === undefined) return undefined;
    if (claim && claim.commandSha !== commandSha(cmd)) {
      throw new SandboxError(`the exec record of this call (${records.dir}) belongs to another command`, { started: true });
    }
    // A claim that cannot be read still means "may have run": follow it with this call's bounds.
    const meta: ExecMeta = claim ?? {
      v: 1,
      key: opts.key ?? '',
      commandSha: commandSha(cmd),
      timeoutMs: opts.timeoutMs,
      maxOutputBytes: opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
      startedAt: Date.now() - START_GRACE_MS,
    };
    // The container as it is: recreating it now would kill the very command being followed.
    const container = this.container ?? this.docker.getContainer(this.name);
    return this.follow(container, records, id, meta, { own: false, keep: true, stopIf: opts.stopIf });
  }

  /**
   * Waits for the command of record `id` to end and builds its result: from the status the
   * wrapper wrote, or after killing it at its deadline (or when stopIf asks), or as interrupted
   * when neither the status nor a process of it exists any more.
   */
  private async follow(container: Docker.Container, records: ExecRecords, id: string, meta: ExecMeta, o: FollowOptions): Promise<ExecResult> {
    const deadline = meta.startedAt + meta.timeoutMs + KILL_GRACE_MS;
    let streamOpen = o.stream !== undefined;
    const ended = o.stream ? endOf(o.stream).then(() => void (streamOpen = false)) : undefined;
    let killed: 'timeout' | 'stopped' | undefined;
    let killedAt = 0;
    let killFailed = false;
    let nextWatch = o.stopIf ? Date.now() + WATCH_EVERY_MS : Infinity;
    let nextProbe = 0;
    const finish = (f: Ending) => this.finish(records, id, meta, o, f);
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
        let reason: 'timeout' | 'stopped' | undefined = now >= deadline ? 'timeout' : undefined;
        if (!reason && now >= nextWatch) {
          reason = (await o.stopIf!().catch(() => false)) ? 'stopped' : undefined;
          nextWatch = Date.now() + WATCH_EVERY_MS;
        }
        if (reason) {
          killed = reason;
          killedAt = Date.now();
          const outcome = await this.killMarked(container, id);
          if (outcome === 'gone') return finish({ interrupted: true });
          killFailed = outcome === 'failed';
          continue;
        }
      }
      now = Date.now();
      if (!streamOpen && now >= nextProbe) {
        const running = await this.isRunning(container, id);
        nextProbe = Date.now() + PROBE_EVERY_MS;
        if (running === false && (o.own || now - meta.startedAt >= START_GRACE_MS)) {
          // The wrapper may have recorded the status (or another attempt the result) between the looks.
          if ((await records.status(id)) !== undefined || (o.keep && (await records.readResult(id)))) continue;
          return finish({ interrupted: true });
        }
      }
      const wake = Math.min(killed ? killedAt + AFTER_KILL_MS : Math.min(deadline, nextWatch), streamOpen ? Infinity : Date.now() + POLL_MS);
      await waitUpTo(streamOpen ? ended : undefined, wake - Date.now());
    }
  }

  /** Builds the result from the record's files; a kept record stores it (first writer wins) and drops the raw files. */
  private async finish(
    records: ExecRecords,
    id: string,
    meta: ExecMeta,
    o: FollowOptions,
    f: Ending,
  ): Promise<ExecResult> {
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
    };
    if (!o.keep) return result;
    const kept = await records.storeResult(id, result);
    await records.discardOutputs(id);
    return kept;
  }

  /** SIGKILLs every process of the command (marker HARNESS_EXEC=id), escapees of its process group included. */
  private async killMarked(container: Docker.Container, id: string): Promise<'ok' | 'gone' | 'failed'> {
    const script = `for p in /proc/[0-9]*; do grep -qsxzF 'HARNESS_EXEC=${id}' "$p/environ" && kill -9 "\${p##*/}"; done; true`;
    try {
      await runProbe(container, script);
      return 'ok';
    } catch (err) {
      return isGone(err) && !isPaused(err) ? 'gone' : 'failed';
    }
  }

  /** Whether the wrapper or the command of record `id` still runs; undefined when Docker cannot tell. */
  private async isRunning(container: Docker.Container, id: string): Promise<boolean | undefined> {
    const script = `for p in /proc/[0-9]*; do grep -qsxzE 'HARNESS_(WRAP|EXEC)=${id}' "$p/environ" && { echo running; exit 0; }; done; echo idle`;
    try {
      const out = await runProbe(container, script);
      return out.includes('running') ? true : out.includes('idle') ? false : undefined;
    } catch (err) {
      // Removed, or stopped (a restart ends every process in it): the command is not running.
      return isGone(err) && !isPaused(err) ? false : undefined;
    }
  }

  /** Ready container and created (not started) exec; a container removed behind our back is recreated once. */
  private async prepare(id: string, cmd: string, timeoutMs: number): Promise<{ container: Docker.Container; exec: Docker.Exec }> {
    const container = await this.ready();
    const [uid, gid = uid] = this.user.split(':').map(Number);
    if (this.ownershipDirty && canAdopt() && Number.isInteger(uid) && Number.isInteger(gid)) {
      this.ownershipDirty = false;
      await adoptTree(await this.workspace(), uid!, gid!);
    }
    try {
      return { container, exec: await this.createExec(container, id, cmd, timeoutMs) };
    } catch (err) {
      if (!isGone(err)) throw toSandboxError(err, this.image);
      this.container = undefined;
      const again = await this.ready();
      try {
        return { container: again, exec: await this.createExec(again, id, cmd, timeoutMs) };
      } catch (e) {
        throw toSandboxError(e, this.image);
      }
    }
  }

  private createExec(container: Docker.Container, id: string, cmd: string, timeoutMs: number): Promise<Docker.Exec> {
    return container.exec({
      Cmd: ['/bin/sh', '-c', WRAPPER, 'harness-exec', id, (timeoutMs / 1000).toFixed(3), cmd],
      AttachStdout: true,
      AttachStderr: true,
      WorkingDir: '/workspace',
      Env: [`HARNESS_WRAP=${id}`],
    });
  }

  private maybePrune(records: ExecRecords): void {
    if (Date.now() - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = Date.now();
    void records.prune(RECORD_TTL_MS).catch(() => undefined);
  }

  private records(): Promise<ExecRecords> {
    this.recordsReady ??= (async () => {
      const [uid, gid = uid] = this.user.split(':').map(Number);
      const owner = Number.isInteger(uid) && Number.isInteger(gid) ? { uid: uid!, gid: gid! } : undefined;
      const records = new ExecRecords(execsDir(this.opts.home, this.opts.sessionId), owner);
      try {
        await records.ensure();
      } catch (err) {
        throw new SandboxError(`cannot create the exec records folder ${records.dir}: ${(err as Error).message}`);
      }
      return records;
    })().catch((err: unknown) => {
      this.recordsReady = undefined;
      throw err;
    });
    return this.recordsReady;
  }

  private async workspace(): Promise<string> {
    return path.resolve(await ensureWorkspace(this.opts.home, this.opts.sessionId));
  }

  private ready(): Promise<Docker.Container> {
    if (this.container) return Promise.resolve(this.container);
    this.opening ??= this.open()
      .then((c) => (this.container = c))
      .finally(() => (this.opening = undefined));
    return this.opening;
  }

  private async open(): Promise<Docker.Container> {
    const ws = await this.workspace();
    const execDir = (await this.records()).dir;
    const c = this.docker.getContainer(this.name);
    try {
      let info = await c.inspect().catch((err: unknown) => (statusOf(err) === 404 ? undefined : Promise.reject(err)));
      const mount = info?.Mounts.find((m) => m.Destination === '/workspace');
      const skillsMissing = (this.opts.skillsMounts ?? []).some(
        (m) => !info?.Mounts.some((x) => x.Destination === m.container && x.Source === path.resolve(m.host) && !x.RW),
      );
      // Containers made before exec records or the file-size limit existed lack them: recreate.
      const execsMissing = !info?.Mounts.some((x) => x.Destination === EXEC_MOUNT && x.Source === execDir && x.RW);
      const fsizeMissing = !info?.HostConfig.Ulimits?.some((u) => u.Name === 'fsize' && u.Hard === this.limits.fileSizeBytes);
      if (info && (info.Config.Labels?.[LABELS.session] !== this.opts.sessionId || mount?.Source !== ws || skillsMissing || execsMissing || fsizeMissing)) {
        // Same name, other workspace (another HARNESS_HOME on this engine): never expose the
        // wrong files; the other harness recreates its own on its next command.
        await c.remove({ force: true });
        info = undefined;
      }
      if (!info) {
        const spec = containerSpec({ ...this.opts, name: this.name, image: this.image, user: this.user, limits: this.limits, workspace: ws, execDir });
        await this.docker.createContainer(spec).catch((err: unknown) => (statusOf(err) === 409 ? undefined : Promise.reject(err)));
        this.ownershipDirty = true;
      }
      await c.start().catch((err: unknown) => (statusOf(err) === 304 ? undefined : Promise.reject(err)));
      return c;
    } catch (err) {
      throw toSandboxError(err, this.image);
    }
  }
}
