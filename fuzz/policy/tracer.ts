/**
 * Runs shell commands for real, as the sandbox would, and reports what they did: the programs
 * they exec'd, the write-like system calls they made or attempted, and the files they created,
 * changed or deleted. One long-lived container of the trace image (container.ts); commands go in
 * batches, one `docker exec` of driver.sh per batch, which restores the workspace from the
 * fixture whenever a command changed it.
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Docker from 'dockerode';
import { MOUNTS, OWNER_LABEL, SANDBOX_ENV, TRACE_IMAGE, TRACE_SCRATCH, traceContainerSpec } from './container';
import { DRIVER, FIXTURE } from './paths';
import { diffSnapshots, parseSnapshot, type Change, type Snapshot } from './snapshot';
import { parseStrace, TRACED_SYSCALLS, type Exec, type WriteCall } from './strace';

export interface TraceResult {
  command: string;
  exitCode: number;
  durationMs: number;
  timedOut: boolean;
  /** Programs exec'd after the command's shell started (it is the root of the trace). */
  execs: Exec[];
  writes: WriteCall[];
  /** Files under /workspace, /tmp and /dev/shm created, changed or deleted. */
  changes: Change[];
  /** Trace lines the parser did not understand. */
  unparsed: string[];
  stdout: string;
  stderr: string;
  /** The driver never reported on it: the command took the driver or the container down. */
  lost?: boolean;
}

export interface TracerOptions {
  docker?: Docker;
  /** Per-command limit (the sandbox's `timeout -s KILL`), seconds. */
  timeoutSeconds?: number;
  /** Commands per `docker exec`. */
  batchSize?: number;
}

const OWNER = `${os.hostname()}:${process.pid}`;

export class Tracer {
  private batches = 0;

  private constructor(
    private readonly docker: Docker,
    private container: Docker.Container,
    private readonly dirs: { root: string; workspace: string; input: string; output: string },
    private readonly user: string,
    private readonly timeoutSeconds: number,
    private readonly batchSize: number,
  ) {}

  /** Starts the container. Fails (never skips) when Docker or the trace image is missing. */
  static async start(o: TracerOptions = {}): Promise<Tracer> {
    const docker = o.docker ?? new Docker();
    try {
      await docker.ping();
    } catch (err) {
      throw new Error(`Docker is not reachable (${(err as Error).message}): run npm run setup`);
    }
    if (!(await docker.getImage(TRACE_IMAGE).inspect().then(() => true, () => false))) {
      throw new Error(`the trace image ${TRACE_IMAGE} is missing: run npm run setup (or bash sandbox/build-trace-image.sh)`);
    }
    await removeOrphans(docker);
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'policy-trace-'));
    const dirs = { root, workspace: path.join(root, 'workspace'), input: path.join(root, 'in'), output: path.join(root, 'out') };
    for (const d of [dirs.workspace, dirs.input, dirs.output]) fs.mkdirSync(d);
    fs.copyFileSync(DRIVER, path.join(dirs.input, 'driver.sh'));
    fs.cpSync(FIXTURE, path.join(dirs.input, 'fixture'), { recursive: true });
    fs.chmodSync(root, 0o755);
    fs.chmodSync(dirs.input, 0o755);
    // As the sandbox: uid 1000 for a root worker, else the worker's own ids.
    const root0 = process.getuid?.() === 0;
    const user = root0 ? '1000:1000' : `${process.getuid!()}:${process.getgid!()}`;
    if (root0) for (const d of [dirs.workspace, dirs.output]) fs.chownSync(d, 1000, 1000);
    const name = `policy-trace-${randomUUID().slice(0, 8)}`;
    const container = await docker.createContainer(traceContainerSpec({ name, user, owner: OWNER, ...dirs }));
    await container.start();
    return new Tracer(docker, container, dirs, user, o.timeoutSeconds ?? 5, o.batchSize ?? 250);
  }

  /** Runs every command (in batches) and reports on each, in order. */
  async trace(commands: readonly string[]): Promise<TraceResult[]> {
    const results: TraceResult[] = [];
    let next = 0;
    while (next < commands.length) {
      const batch = commands.slice(next, next + this.batchSize);
      const got = await this.runBatch(batch);
      results.push(...got);
      next += got.length;
    }
    return results;
  }

  /** Removes the container and every file of this tracer. */
  async stop(): Promise<void> {
    await this.container.remove({ force: true }).catch(() => undefined);
    // Files the container's user made: owned by uid 1000 when we are root, removable either way.
    fs.rmSync(this.dirs.root, { recursive: true, force: true });
  }

  /** One docker exec; returns the results it produced (at least one: a lost command counts). */
  private async runBatch(batch: string[]): Promise<TraceResult[]> {
    const bad = batch.find((c) => c.includes('\0'));
    if (bad !== undefined) throw new Error(`a shell command cannot hold a NUL byte: ${JSON.stringify(bad)}`);
    const n = this.batches++;
    const inFile = path.join(this.dirs.input, `batch-${n}`);
    fs.writeFileSync(inFile, batch.map((c) => `${c}\0`).join(''));
    const outDir = path.join(this.dirs.output, `b${n}`);
    const log = await this.exec(
      ['bash', `${MOUNTS.input}/driver.sh`, `${MOUNTS.input}/batch-${n}`, `${MOUNTS.output}/b${n}`,
        String(this.timeoutSeconds), TRACED_SYSCALLS.join(','), ...SANDBOX_ENV, `TMPDIR=${TRACE_SCRATCH}`],
      batch.length * (this.timeoutSeconds + 5) * 1000 + 30_000,
    );
    try {
      const results: TraceResult[] = [];
      const bases = new Map<number, Snapshot>();
      for (let i = 0; i < batch.length; i++) {
        const r = readResult(outDir, i, batch[i]!, bases, this.timeoutSeconds);
        if (r) {
          results.push(r);
          continue;
        }
        // The driver stopped here: this command took it (or the container) down.
        if (i === 0 && !fs.existsSync(path.join(outDir, 'base-0.meta'))) {
          throw new Error(`the trace driver did not start: ${log.slice(-2000)}`);
        }
        results.push(lostResult(outDir, i, batch[i]!));
        await this.revive();
        break;
      }
      return results;
    } finally {
      fs.rmSync(outDir, { recursive: true, force: true });
      fs.rmSync(inFile, { force: true });
    }
  }

  /** Runs a process in the container and returns its output once it ends (or the deadline). */
  private async exec(cmd: string[], deadlineMs: number): Promise<string> {
    const exec = await this.container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true, WorkingDir: '/workspace', User: this.user });
    const stream = await exec.start({ hijack: true, stdin: false });
    let out = '';
    stream.on('data', (c: Buffer) => (out = (out + c.toString('latin1')).slice(-20_000)));
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      new Promise<boolean>((resolve) => {
        for (const ev of ['end', 'close', 'error']) stream.once(ev, () => resolve(true));
      }),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), deadlineMs))),
    ]);
    clearTimeout(timer);
    stream.destroy();
    // A driver past every per-command limit is stuck: the container goes, results so far stay.
    if (!ended) await this.container.kill().catch(() => undefined);
    return out;
  }

  /** A command that killed the driver may be stopping the container too (its keep-alive): a new
   * one, whatever state the old one reports (it may still say running while it stops). */
  private async revive(): Promise<void> {
    await this.container.remove({ force: true }).catch(() => undefined);
    const name = `policy-trace-${randomUUID().slice(0, 8)}`;
    this.container = await this.docker.createContainer(traceContainerSpec({ name, user: this.user, owner: OWNER, ...this.dirs }));
    await this.container.start();
  }
}

function readResult(dir: string, i: number, command: string, bases: Map<number, Snapshot>, limitSeconds: number): TraceResult | undefined {
  const status = readText(path.join(dir, `${i}.status`));
  const m = /^code=(\d+) base=(\d+) us=(\d+)/.exec(status ?? '');
  if (!m) return undefined;
  const [code, base, us] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const trace = parseStrace(readText(path.join(dir, `${i}.trace`), 'latin1') ?? '');
  let changes: Change[] = [];
  if (fs.existsSync(path.join(dir, `${i}.meta`))) {
    let before = bases.get(base);
    if (!before) bases.set(base, (before = readSnapshot(path.join(dir, `base-${base}`))));
    changes = diffSnapshots(before, readSnapshot(path.join(dir, `${i}`)));
  }
  return {
    command,
    exitCode: code,
    durationMs: us / 1000,
    // `timeout -s KILL` gives 137 at the deadline (124 on some versions).
    timedOut: (code === 137 || code === 124) && us >= limitSeconds * 0.95e6,
    ...trace,
    changes,
    stdout: readText(path.join(dir, `${i}.out`)) ?? '',
    stderr: readText(path.join(dir, `${i}.err`)) ?? '',
  };
}

function lostResult(dir: string, i: number, command: string): TraceResult {
  const trace = parseStrace(readText(path.join(dir, `${i}.trace`), 'latin1') ?? '');
  return { command, exitCode: -1, durationMs: 0, timedOut: false, ...trace, changes: [], stdout: '', stderr: '', lost: true };
}

function readSnapshot(prefix: string): Snapshot {
  const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f) : Buffer.alloc(0));
  return parseSnapshot(read(`${prefix}.meta`), read(`${prefix}.sum`));
}

function readText(file: string, encoding: BufferEncoding = 'utf8'): string | undefined {
  return fs.existsSync(file) ? fs.readFileSync(file, encoding) : undefined;
}

/** Removes tracer containers whose owning process (on this host) is gone; others' are left alone. */
async function removeOrphans(docker: Docker): Promise<void> {
  const list = await docker.listContainers({ all: true, filters: { label: [OWNER_LABEL] } });
  for (const c of list) {
    const [host, pid] = (c.Labels[OWNER_LABEL] ?? '').split(':');
    if (host !== os.hostname() || alive(Number(pid))) continue;
    await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
