/**
 * The sandboxes this worker manages: one DockerSandbox per session, made on first use and
 * removed when the session ends. Every call into one holds a lease (use.ts), which is what
 * the two sweeps go by, so neither ever cuts off a call of any worker on this home:
 *
 * - removeOrphans: the containers, exec records and use folders of sessions whose workflows no
 *   longer run (ended while Docker was down, a killed worker, a session purged from Temporal);
 * - stopIdle: containers no call used for a while are stopped, not removed; the workspace is a
 *   host folder, so the next command starts the container again and finds every file.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import Docker from 'dockerode';
import { DockerSandbox } from './docker-sandbox';
import { type ReadOnlyMount } from './containers';
import { type Sandbox } from './sandbox';
import { listSandboxContainers, removeContainer, stopContainer } from './containers';
import { beginStop, commandsRunning, forgetUse, lastUsed, liveLeases, useRoot, withLease } from './use';
import { SESSION_ID } from '../tools/workspace';

/** Sandbox settings of a worker. */
interface SandboxSettings {
  home: string;
  image?: string;
  docker?: Docker;
  /** Read-only folders to mount for a session (its skills at /skills/<name>). */
  skillsMounts?: (sessionId: string) => ReadOnlyMount[];
}

export class SandboxPool {
  private readonly byId = new Map<string, DockerSandbox>();
  readonly docker: Docker;

  constructor(private readonly settings: SandboxSettings) {
    this.docker = settings.docker ?? new Docker();
  }

  /** The session's sandbox (the container itself is created lazily on first exec). */
  get(sessionId: string): Sandbox {
    const home = this.settings.home;
    // Resolved per call, after any stop of it is over: a stopped sandbox's instance is dropped.
    const box = () => this.box(sessionId);
    return {
      exec: (cmd, opts) => withLease(home, sessionId, () => box().exec(cmd, opts)),
      ensure: () => withLease(home, sessionId, () => box().ensure()),
      remove: () => this.remove(sessionId),
      hostWrote: () => box().hostWrote(),
      get fileSizeLimitBytes() {
        return box().fileSizeLimitBytes;
      },
    };
  }

  /** Removes the session's container (if any), its exec records and its use folder. */
  async remove(sessionId: string): Promise<void> {
    const box = this.box(sessionId);
    this.byId.delete(sessionId);
    await box.remove();
    forgetUse(this.settings.home, sessionId);
  }

  /**
   * Removes the containers, exec records and use folders of this home's sessions that no call
   * uses and whose workflows no longer run (`owned` asks Temporal: session, turn or eval); returns
   * the containers' names. Every session is asked before anything is removed: when `owned`
   * throws (Temporal unreachable), this throws and nothing is removed.
   */
  async removeOrphans(owned: (sessionId: string) => Promise<boolean>): Promise<string[]> {
    const home = this.settings.home;
    const containers = await listSandboxContainers(this.docker, home);
    const ids = new Set([...containers.map((c) => c.sessionId), ...(await sessionFolders(path.join(path.resolve(home), 'execs'))), ...(await sessionFolders(useRoot(home)))]);
    const orphans = new Set<string>();
    for (const id of ids) {
      // A container without a session label is none the harness made for a session: not kept.
      if (id === '' || (SESSION_ID.test(id) && liveLeases(home, id) === 0 && !(await owned(id)))) orphans.add(id);
    }
    const removed: string[] = [];
    for (const c of containers) {
      if (!orphans.has(c.sessionId)) continue;
      await removeContainer(this.docker, c.id);
      removed.push(c.name);
    }
    for (const id of orphans) {
      if (id === '') continue;
      this.byId.delete(id);
      // Only after its container is gone: nothing inside can race the recursive removal.
      await fs.rm(path.join(path.resolve(home), 'execs', id), { recursive: true, force: true });
      forgetUse(home, id);
    }
    return removed;
  }

  /**
   * Stops the running containers of this home that no call used for `idleMs` and that run no
   * command; returns their names. A call that comes during a stop waits for it, then starts the
   * container again.
   */
  async stopIdle(idleMs: number, now = Date.now()): Promise<string[]> {
    const home = this.settings.home;
    const stopped: string[] = [];
    for (const c of await listSandboxContainers(this.docker, home)) {
      if (!c.running || !SESSION_ID.test(c.sessionId)) continue;
      const used = Math.max(c.createdMs, lastUsed(home, c.sessionId) ?? 0);
      if (now - used < idleMs || (await commandsRunning(home, c.sessionId, now))) continue;
      const end = beginStop(home, c.sessionId);
      if (!end) continue; // a call uses it now
      try {
        await stopContainer(this.docker, c.id);
        // Its shell session and cached container are gone: the next call makes a fresh instance.
        this.byId.delete(c.sessionId);
        stopped.push(c.name);
      } finally {
        end();
      }
    }
    return stopped;
  }

  private box(sessionId: string): DockerSandbox {
    let box = this.byId.get(sessionId);
    if (!box) {
      box = new DockerSandbox({
        home: this.settings.home,
        sessionId,
        docker: this.docker,
        ...(this.settings.image ? { image: this.settings.image } : {}),
        skillsMounts: this.settings.skillsMounts?.(sessionId) ?? [],
      });
      this.byId.set(sessionId, box);
    }
    return box;
  }
}

/** The session ids that name folders under `dir`. */
async function sessionFolders(dir: string): Promise<string[]> {
  return (await fs.readdir(dir).catch(() => [] as string[])).filter((id) => SESSION_ID.test(id));
}
