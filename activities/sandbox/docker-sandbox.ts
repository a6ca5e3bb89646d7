/**
 * One hardened Docker container per session, driven through the Docker Engine API (dockerode;
 * never the docker CLI per call). The session workspace is bind-mounted at /workspace, so
 * the host file tools and the commands see the same files.
 *
 * A command runs at most once per call key. A small sh wrapper inside the container sends its
 * output to files in the session's exec records (exec-record.ts, mounted at EXEC_MOUNT) and
 * writes its exit status there when it ends, so the outcome outlives the worker that started
 * it: an attempt that finds the call already claimed follows the record (exec-follow.ts: waits
 * for the command, or returns its result) and never starts the command again.
 *
 * This file holds the class: the container it keeps (containers.ts opens it), the claim before
 * a command starts, and the workspace handed to the sandbox user. The contract the tools use is
 * sandbox.ts; its names are re-exported here, where the callers have always imported them.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import Docker from 'dockerode';
import { ensureWorkspace } from '../tools/workspace';
import { DEFAULT_SANDBOX_IMAGE, isGone, SandboxError, statusOf, toSandboxError } from './docker-errors';
import { containerName, DEFAULT_LIMITS, openContainer, type ReadOnlyMount, type SandboxLimits } from './containers';
import { commandSha, ExecRecords, execsDir, oneShotId, recordId, type ExecMeta, type ExecResult } from './exec-record';
import { followExec, isRunning, START_GRACE_MS } from './exec-follow';
import { adoptTree, canAdopt } from './ownership';
import { ExecSession, sessionCanRun } from './exec-session';
import { createWrapperExec, startExec, type Launched } from './exec-launch';
import { DEFAULT_MAX_OUTPUT_BYTES, type ExecOptions, type Sandbox } from './sandbox';


// Retries of a call come within its activity's bounded attempts; a day is far beyond them.
const RECORD_TTL_MS = 24 * 3_600_000;
const PRUNE_EVERY_MS = 3_600_000;

/** Options of a DockerSandbox; only home and sessionId are required. */
interface DockerSandboxOptions {
  home: string;
  sessionId: string;
  docker?: Docker;
  image?: string;
  limits?: Partial<SandboxLimits>;
  /** "uid:gid" inside the container; default 1000:1000 for a root worker, else the worker's own ids. */
  user?: string;
  /** Host folders mounted read-only (skills at /skills/<name>); a container made without them is recreated. */
  skillsMounts?: readonly ReadOnlyMount[];
  /** Start commands through one shell session per container (default) rather than a Docker exec each. */
  sessions?: boolean;
}

/** The hardened container of one session, created on first use and reused after that. */
export class DockerSandbox implements Sandbox {
  readonly docker: Docker;
  readonly image: string;
  readonly name: string;
  private readonly limits: SandboxLimits;
  private readonly user: string;
  private container?: Docker.Container;
  private readonly sessions: boolean;
  private shell?: ExecSession;
  private shellOf?: Docker.Container;
  private shellOpening?: Promise<ExecSession>;
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
    this.sessions = opts.sessions ?? true;
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
   * for), never started again. Throws SandboxError only (or, cancelled before the command
   * started, the cancellation's reason); `started` says whether it may have run.
   */
  async exec(cmd: string, opts: ExecOptions): Promise<ExecResult> {
    const records = await this.records();
    const keep = opts.key !== undefined;
    const id = opts.key !== undefined ? recordId(opts.key) : oneShotId();
    if (keep) {
      const earlier = await this.resume(records, id, cmd, opts);
      if (earlier) return earlier;
    }
    // Nothing ran for this call yet: every failure until the command starts may be retried.
    const { container, launch } = await this.prepare(id, cmd, opts.timeoutMs);
    // Cancelled while the container started: the command is not started at all.
    opts.cancel?.throwIfAborted();
    // Taken after the (possibly slow) container start: the deadline counts from the command's start.
    const meta = execMeta(cmd, opts, Date.now());
    try {
      if (!keep) await records.prepareOutputDir(id);
      else if (!(await records.claim(id, meta))) {
        // Another attempt of this call claimed it meanwhile: follow that one (this one never starts).
        const theirs = await this.resume(records, id, cmd, opts);
        if (theirs) return theirs;
        throw new SandboxError('the exec record of this call vanished while being claimed', { started: true });
      }
    } catch (err) {
      if (err instanceof SandboxError) throw err;
      throw new SandboxError(`cannot write the exec record in ${records.dir}: ${(err as Error).message}`);
    }
    const t0 = performance.now();
    const started = await launch(records);
    try {
      return await followExec(container, records, id, meta, { ended: started.ended, own: true, keep, stopIf: opts.stopIf, cancel: opts.cancel, t0 });
    } finally {
      started.close();
      if (!keep) await records.forget(id).catch(() => undefined);
      this.maybePrune(records);
    }
  }

  /** Removes the container (force) and the session's exec records; the workspace folder stays. */
  async remove(): Promise<void> {
    this.container = undefined;
    this.shell?.close();
    this.shell = undefined;
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
    const meta = claim ?? execMeta(cmd, opts, Date.now() - START_GRACE_MS);
    // The container as it is: recreating it now would kill the very command being followed.
    const container = this.container ?? this.docker.getContainer(this.name);
    return followExec(container, records, id, meta, { own: false, keep: true, stopIf: opts.stopIf, cancel: opts.cancel });
  }

  /**
   * The ready container and how to start the command in it: through the container's shell
   * session (opened when there is none), or a Docker exec created here. A container removed
   * behind our back is recreated once. Launching never throws: whether the command started
   * is for the record to tell, never for a retry to guess.
   */
  private async prepare(id: string, cmd: string, timeoutMs: number): Promise<{ container: Docker.Container; launch: (records: ExecRecords) => Promise<Launched> }> {
    const container = await this.ready();
    const [uid, gid = uid] = this.user.split(':').map(Number);
    if (this.ownershipDirty && canAdopt() && Number.isInteger(uid) && Number.isInteger(gid)) {
      this.ownershipDirty = false;
      await adoptTree(await this.workspace(), uid!, gid!);
    }
    const timeoutSec = (timeoutMs / 1000).toFixed(3);
    const launcher = async (c: Docker.Container) => {
      if (this.sessions && sessionCanRun(cmd)) {
        const session = await this.session(c);
        return async (records: ExecRecords): Promise<Launched> => {
          const sent = session.run(id, timeoutSec, cmd);
          if (sent && (await sent.started)) return { ended: sent.ended, close: () => undefined };
          // Sent to a session that died (or stayed silent): the wrapper may be on its way all
          // the same. Only when it shows no sign of life after the start grace is it started
          // again, by a Docker exec of its own; otherwise it is followed like any other.
          if (sent && (await startedAfterAll(c, records, id))) return { close: () => undefined };
          return startExec(createWrapperExec(c, id, cmd, timeoutSec));
        };
      }
      const exec = await createWrapperExec(c, id, cmd, timeoutSec);
      return (_records: ExecRecords) => startExec(exec);
    };
    try {
      return { container, launch: await launcher(container) };
    } catch (err) {
      if (!isGone(err)) throw toSandboxError(err, this.image);
      this.container = undefined;
      const again = await this.ready();
      try {
        return { container: again, launch: await launcher(again) };
      } catch (e) {
        throw toSandboxError(e, this.image);
      }
    }
  }

  /** The container's open shell session, started when there is none (or the last one ended). */
  private session(container: Docker.Container): Promise<ExecSession> {
    if (this.shell?.alive && this.shellOf === container) return Promise.resolve(this.shell);
    this.shell?.close();
    this.shell = undefined;
    this.shellOpening ??= ExecSession.start(container, this.docker.modem)
      .then((s) => {
        this.shell = s;
        this.shellOf = container;
        return s;
      })
      .finally(() => (this.shellOpening = undefined));
    return this.shellOpening;
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
    const { home, sessionId, skillsMounts } = this.opts;
    const settings = { home, sessionId, skillsMounts, name: this.name, image: this.image, user: this.user, limits: this.limits };
    const workspace = await this.workspace();
    const execDir = (await this.records()).dir;
    return openContainer(this.docker, { ...settings, workspace, execDir }, () => (this.ownershipDirty = true));
  }
}

/** The record of a command about to start (or, for a claim that cannot be read, assumed started) at `startedAt`. */
function execMeta(cmd: string, opts: ExecOptions, startedAt: number): ExecMeta {
  return {
    v: 1,
    key: opts.key ?? '',
    commandSha: commandSha(cmd),
    timeoutMs: opts.timeoutMs,
    maxOutputBytes: opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
    startedAt,
  };
}

/**
 * Whether the wrapper of record `id` started after all, asked once the start grace is over
 * (a wrapper forked by a session killed just after cannot be later than that): it left output
 * or a status, or it runs. When Docker cannot tell, it counts as started: never twice.
 */
async function startedAfterAll(container: Docker.Container, records: ExecRecords, id: string): Promise<boolean> {
  await new Promise((resolve) => setTimeout(resolve, START_GRACE_MS));
  if (await records.touched(id)) return true;
  return (await isRunning(container, id)) !== false;
}
