/**
 * Sandbox containers as Docker objects: name, hardened spec, opening a session's container
 * (recreated when it no longer fits), listing, stopping and removing them for the worker's
 * sweeps (pool.ts), the doctor's checks.
 */
import * as path from 'node:path';
import Docker from 'dockerode';
import { BUILD_HINT, DEFAULT_SANDBOX_IMAGE, statusOf, toSandboxError } from './docker-errors';

/** The whole environment of the sandbox container: nothing from the worker's (API keys) reaches it. */
export const SANDBOX_ENV: readonly string[] = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'HOME=/tmp', 'LANG=C.UTF-8'];

/** Labels every harness container carries; orphan removal selects on them. */
export const LABELS = { managed: 'harness.managed', session: 'harness.session', home: 'harness.home' } as const;

/** Resource limits of a sandbox container. */
export interface SandboxLimits {
  memoryBytes: number;
  pids: number;
  nanoCpus: number;
  /** Largest file a sandbox process may write (RLIMIT_FSIZE): past it the writer gets SIGXFSZ. */
  fileSizeBytes: number;
}

/** Defaults: 512 MiB without swap, 128 processes, one CPU, files up to 1 GiB. */
export const DEFAULT_LIMITS: SandboxLimits = { memoryBytes: 512 * 1024 * 1024, pids: 128, nanoCpus: 1e9, fileSizeBytes: 1024 ** 3 };

/** Where a container sees its session's exec records (host `<home>/execs/<session>`). */
export const EXEC_MOUNT = '/run/harness-exec';

/** A host folder shown read-only inside the container (skills at /skills/<name>). */
export interface ReadOnlyMount {
  host: string;
  container: string;
}

/** The container name of a session. */
export function containerName(sessionId: string): string {
  return `harness-${sessionId}`;
}

/** What a session container is made from; `workspace` is the absolute host folder. */
interface ContainerSettings {
  name: string;
  image: string;
  user: string;
  sessionId: string;
  home: string;
  workspace: string;
  limits: SandboxLimits;
  /** Extra read-only bind mounts (absolute host folder → absolute container path). */
  skillsMounts?: readonly ReadOnlyMount[];
  /** The session's exec-record folder, mounted writable at EXEC_MOUNT. */
  execDir?: string;
}

/** The hardened create options of a session container. */
export function containerSpec(o: ContainerSettings): Docker.ContainerCreateOptions {
  const mounts = [
    ...(o.skillsMounts ?? []).map((m) => ({ Type: 'bind' as const, Source: path.resolve(m.host), Target: m.container, ReadOnly: true })),
    ...(o.execDir ? [{ Type: 'bind' as const, Source: path.resolve(o.execDir), Target: EXEC_MOUNT, ReadOnly: false }] : []),
  ];
  return {
    name: o.name,
    Image: o.image,
    // The keep-alive: commands arrive as execs.
    Cmd: ['sleep', 'infinity'],
    User: o.user,
    WorkingDir: '/workspace',
    // Only these: nothing from the worker's environment (API keys) reaches the sandbox.
    Env: [...SANDBOX_ENV],
    Labels: { [LABELS.managed]: 'true', [LABELS.session]: o.sessionId, [LABELS.home]: path.resolve(o.home) },
    NetworkDisabled: true,
    HostConfig: {
      Binds: [`${o.workspace}:/workspace:rw`],
      // The Mounts form, not Binds strings: a host path may contain ':' or ','.
      ...(mounts.length ? { Mounts: mounts } : {}),
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      Tmpfs: { '/tmp': 'rw,noexec,nosuid,size=64m' },
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      PidsLimit: o.limits.pids,
      // Equal to Memory: no swap, so a memory bomb is killed rather than thrashing the host.
      Memory: o.limits.memoryBytes,
      MemorySwap: o.limits.memoryBytes,
      NanoCpus: o.limits.nanoCpus,
      // Caps every file a command writes, its captured output included: one runaway write
      // cannot fill the host disk (the workspace budget polices the total).
      Ulimits: [{ Name: 'fsize', Soft: o.limits.fileSizeBytes, Hard: o.limits.fileSizeBytes }],
      // An init (tini) reaps orphans; without it zombies would eat the pids limit for good.
      Init: true,
      LogConfig: { Type: 'none', Config: {} },
    },
  };
}

/**
 * Finds the session's container, or creates it, and starts it. A container that no longer fits
 * these settings is removed first. `onCreate` runs once a container was made anew, before the
 * start, so the caller learns of it even when the start fails. Throws SandboxError only.
 */
export async function openContainer(docker: Docker, o: ContainerSettings & { execDir: string }, onCreate: () => void): Promise<Docker.Container> {
  const c = docker.getContainer(o.name);
  try {
    let info = await c.inspect().catch((err: unknown) => (statusOf(err) === 404 ? undefined : Promise.reject(err)));
    if (info && !fits(info, o)) {
      // Same name, other workspace (another HARNESS_HOME on this engine): never expose the
      // wrong files; the other harness recreates its own on its next command.
      await c.remove({ force: true });
      info = undefined;
    }
    if (!info) {
      await docker.createContainer(containerSpec(o)).catch((err: unknown) => (statusOf(err) === 409 ? undefined : Promise.reject(err)));
      onCreate();
    }
    await c.start().catch((err: unknown) => (statusOf(err) === 304 ? undefined : Promise.reject(err)));
    return c;
  } catch (err) {
    throw toSandboxError(err, o.image);
  }
}

/** Whether an existing container is this session's, with its workspace and every mount and limit it needs now. */
function fits(info: Docker.ContainerInspectInfo, o: ContainerSettings & { execDir: string }): boolean {
  const mount = info.Mounts.find((m) => m.Destination === '/workspace');
  const skillsMissing = (o.skillsMounts ?? []).some((m) => !info.Mounts.some((x) => x.Destination === m.container && x.Source === path.resolve(m.host) && !x.RW));
  // Containers made before exec records or the file-size limit existed lack them: recreate.
  const execsMissing = !info.Mounts.some((x) => x.Destination === EXEC_MOUNT && x.Source === o.execDir && x.RW);
  const fsizeMissing = !info.HostConfig.Ulimits?.some((u) => u.Name === 'fsize' && u.Hard === o.limits.fileSizeBytes);
  return info.Config.Labels?.[LABELS.session] === o.sessionId && mount?.Source === o.workspace && !skillsMissing && !execsMissing && !fsizeMissing;
}

/** A harness container of one home, as the sweeps see it. */
interface SandboxContainer {
  id: string;
  name: string;
  /** Its session's id ('' when the label is missing: not one the harness made). */
  sessionId: string;
  running: boolean;
  createdMs: number;
}

/** The harness containers of a HARNESS_HOME (all of them with no home), running or not. Throws SandboxError. */
export async function listSandboxContainers(docker: Docker, home?: string): Promise<SandboxContainer[]> {
  const label = [`${LABELS.managed}=true`];
  if (home) label.push(`${LABELS.home}=${path.resolve(home)}`);
  try {
    const list = await docker.listContainers({ all: true, filters: { label } });
    return list.map((c) => ({
      id: c.Id,
      name: (c.Names[0] ?? c.Id).replace(/^\//, ''),
      sessionId: c.Labels[LABELS.session] ?? '',
      running: c.State === 'running',
      createdMs: c.Created * 1000,
    }));
  } catch (err) {
    throw toSandboxError(err);
  }
}

/** Removes a container (force); one already gone is fine. Throws SandboxError. */
export async function removeContainer(docker: Docker, id: string): Promise<void> {
  await docker
    .getContainer(id)
    .remove({ force: true })
    .catch((err: unknown) => (statusOf(err) === 404 ? undefined : Promise.reject(toSandboxError(err))));
}

/**
 * Stops a container, keeping it (its workspace is a host folder and its root file system is
 * read-only, so nothing is lost but what runs and /tmp); one stopped or gone already is fine.
 * The next command starts it again (openContainer). Throws SandboxError.
 */
export async function stopContainer(docker: Docker, id: string): Promise<void> {
  // `sleep infinity` under tini ends on SIGTERM at once; the timeout is for a stuck one.
  await docker
    .getContainer(id)
    .stop({ t: 5 })
    .catch((err: unknown) => (statusOf(err) === 304 || statusOf(err) === 404 ? undefined : Promise.reject(toSandboxError(err))));
}

/**
 * Removes harness containers whose session is not active (given as ids, or asked per session,
 * e.g. of Temporal); returns their names. With `home`, only containers of that HARNESS_HOME,
 * so two harnesses sharing one engine leave each other alone. A session the question fails
 * for counts as active: nothing is removed on a guess.
 */
export async function removeOrphans(
  docker: Docker,
  active: Iterable<string> | ((sessionId: string) => Promise<boolean>) = [],
  opts: { home?: string } = {},
): Promise<string[]> {
  const isActive = typeof active === 'function' ? active : ((ids) => async (id: string) => ids.has(id))(new Set(active));
  const orphans: SandboxContainer[] = [];
  for (const c of await listSandboxContainers(docker, opts.home)) {
    if (!c.sessionId || !(await isActive(c.sessionId).catch(() => true))) orphans.push(c);
  }
  await Promise.all(orphans.map((c) => removeContainer(docker, c.id)));
  return orphans.map((c) => c.name);
}

/** One line per problem (Docker unreachable, image missing); empty when sandboxes can run. */
export async function sandboxProblems(docker: Docker = new Docker(), image = DEFAULT_SANDBOX_IMAGE): Promise<string[]> {
  try {
    await docker.ping();
  } catch (err) {
    return [toSandboxError(err, image).message];
  }
  const found = await docker
    .getImage(image)
    .inspect()
    .then(() => true)
    .catch(() => false);
  return found ? [] : [`sandbox image ${image} is missing: ${BUILD_HINT}`];
}
