/**
 * One hardened Docker container per session, driven through the Docker Engine API (dockerode;
 * never the docker CLI per call). The session workspace is bind-mounted at /workspace, so
 * the host file tools and the commands see the same files.
 */
import { randomUUID } from 'node:crypto';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import Docker from 'dockerode';
import { ensureWorkspace } from '../tools/workspace';
import { DEFAULT_SANDBOX_IMAGE, isGone, statusOf, toSandboxError } from './docker-errors';
import { containerName, containerSpec, DEFAULT_LIMITS, LABELS, type ReadOnlyMount, type SandboxLimits } from './containers';
import { OutputCapture } from './output';
import { adoptTree, canAdopt } from './ownership';

export { DEFAULT_SANDBOX_IMAGE, SandboxError } from './docker-errors';
export { containerName, DEFAULT_LIMITS, LABELS, removeOrphans, sandboxProblems, type ReadOnlyMount, type SandboxLimits } from './containers';

/** Per-stream output cap when the caller gives none. */
export const DEFAULT_MAX_OUTPUT_BYTES = 20_000;
// Beyond the in-container `timeout`, how long before the host kills and stops waiting.
const KILL_GRACE_MS = 1_500;

/** What one command produced; output is capped per stream (head and tail kept). */
export interface ExecResult {
  exitCode: number;
  stdout: string;
  stderr: string;
  truncated: boolean;
  droppedBytes: number;
  timedOut: boolean;
  durationMs: number;
}

/** A place to run shell commands for one session. */
export interface Sandbox {
  exec(cmd: string, opts: { timeoutMs: number; maxOutputBytes?: number }): Promise<ExecResult>;
  ensure(): Promise<void>;
  remove(): Promise<void>;
  /** Host tools changed workspace files; lets the sandbox hand them to its user before the next command. */
  hostWrote?(): void;
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

  constructor(private readonly opts: DockerSandboxOptions) {
    this.docker = opts.docker ?? new Docker();
    this.image = opts.image ?? DEFAULT_SANDBOX_IMAGE;
    this.name = containerName(opts.sessionId);
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    const own = process.getuid && process.getuid() !== 0 ? `${process.getuid()}:${process.getgid!()}` : '1000:1000';
    this.user = opts.user ?? own;
  }

  /** Creates (or finds and starts) the session container. */
  async ensure(): Promise<void> {
    await this.ready();
  }

  /** Marks workspace files as possibly root-owned: the next exec hands them to the sandbox user. */
  hostWrote(): void {
    this.ownershipDirty = true;
  }

  /** Runs `/bin/sh -c cmd` in /workspace; kills it at timeoutMs. Throws SandboxError only. */
  async exec(cmd: string, opts: { timeoutMs: number; maxOutputBytes?: number }): Promise<ExecResult> {
    const container = await this.ready();
    const [uid, gid = uid] = this.user.split(':').map(Number);
    if (this.ownershipDirty && canAdopt() && Number.isInteger(uid) && Number.isInteger(gid)) {
      this.ownershipDirty = false;
      await adoptTree(await this.workspace(), uid!, gid!);
    }
    try {
      return await this.run(container, cmd, opts);
    } catch (err) {
      // The container was removed or stopped behind our back: recreate it once.
      if (!isGone(err)) throw toSandboxError(err, this.image);
      this.container = undefined;
      return this.run(await this.ready(), cmd, opts).catch((e: unknown) => Promise.reject(toSandboxError(e, this.image)));
    }
  }

  /** Removes the container (force); the workspace folder stays. */
  async remove(): Promise<void> {
    this.container = undefined;
    await this.docker
      .getContainer(this.name)
      .remove({ force: true })
      .catch((err: unknown) => {
        if (statusOf(err) !== 404) throw toSandboxError(err, this.image);
      });
  }

  private async run(container: Docker.Container, cmd: string, opts: { timeoutMs: number; maxOutputBytes?: number }): Promise<ExecResult> {
    const max = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    const marker = randomUUID();
    const started = performance.now();
    // `timeout` kills the whole process group at the deadline; the marker finds escapees (setsid).
    const exec = await container.exec({
      Cmd: ['timeout', '-s', 'KILL', (opts.timeoutMs / 1000).toFixed(3), '/bin/sh', '-c', cmd],
      AttachStdout: true,
      AttachStderr: true,
      WorkingDir: '/workspace',
      Env: [`HARNESS_EXEC=${marker}`],
    });
    const stream = await exec.start({ hijack: true, stdin: false });
    const out = new OutputCapture(max);
    const err = new OutputCapture(max);
    this.docker.modem.demuxStream(stream, sink(out), sink(err));
    const finished = await endOf(stream, opts.timeoutMs + KILL_GRACE_MS);
    if (!finished) {
      // Something escaped the process group and holds the pipe: kill it by marker, answer anyway.
      await this.killMarked(container, marker).catch(() => undefined);
      await endOf(stream, 500);
      stream.destroy();
    }
    const durationMs = performance.now() - started;
    const exitCode = await exitCodeOf(exec);
    const timedOut = !finished || (durationMs >= opts.timeoutMs && (exitCode === 137 || exitCode === 124));
    return {
      exitCode,
      stdout: out.text(),
      stderr: err.text(),
      truncated: out.truncated || err.truncated,
      droppedBytes: out.droppedBytes + err.droppedBytes,
      timedOut,
      durationMs,
    };
  }

  /** SIGKILLs every process carrying this command's marker in its environment. */
  private async killMarked(container: Docker.Container, marker: string): Promise<void> {
    const script = `for p in /proc/[0-9]*; do grep -qsxzF 'HARNESS_EXEC=${marker}' "$p/environ" && kill -9 "\${p##*/}"; done; true`;
    const exec = await container.exec({ Cmd: ['/bin/sh', '-c', script], AttachStdout: true, AttachStderr: true });
    const stream = await exec.start({ hijack: true, stdin: false });
    stream.resume();
    await endOf(stream, 2_000);
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
    const c = this.docker.getContainer(this.name);
    try {
      let info = await c.inspect().catch((err: unknown) => (statusOf(err) === 404 ? undefined : Promise.reject(err)));
      const mount = info?.Mounts.find((m) => m.Destination === '/workspace');
      const skillsMissing = (this.opts.skillsMounts ?? []).some(
        (m) => !info?.Mounts.some((x) => x.Destination === m.container && x.Source === path.resolve(m.host) && !x.RW),
      );
      if (info && (info.Config.Labels?.[LABELS.session] !== this.opts.sessionId || mount?.Source !== ws || skillsMissing)) {
        // Same name, other workspace (another HARNESS_HOME on this engine): never expose the
        // wrong files; the other harness recreates its own on its next command.
        await c.remove({ force: true });
        info = undefined;
      }
      if (!info) {
        const spec = containerSpec({ ...this.opts, name: this.name, image: this.image, user: this.user, limits: this.limits, workspace: ws });
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

/** Resolves true when the stream ends or closes, false after `ms` (the stream is left alone). */
function endOf(stream: NodeJS.EventEmitter, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    for (const ev of ['end', 'close', 'error']) stream.once(ev, () => (clearTimeout(timer), resolve(true)));
  });
}

function sink(capture: OutputCapture): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      capture.push(chunk);
      done();
    },
  });
}

async function exitCodeOf(exec: Docker.Exec): Promise<number> {
  // The stream can end a moment before the daemon records the exit code.
  for (let i = 0; i < 40; i++) {
    const info = await exec.inspect();
    if (!info.Running && info.ExitCode !== null) return info.ExitCode;
    await new Promise((r) => setTimeout(r, 25));
  }
  return 137;
}
