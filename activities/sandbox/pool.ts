/**
 * The sandboxes this worker manages: one DockerSandbox per session, made on first use and
 * removed when the session ends; containers left by sessions that are no longer running
 * (a crash, a killed worker) are removed at worker start.
 */
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import Docker from 'dockerode';
import { DockerSandbox, removeOrphans, type ReadOnlyMount, type Sandbox } from './docker-sandbox';
import { SESSION_ID } from '../tools/workspace';

/** Sandbox settings of a worker. */
export interface SandboxSettings {
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

  /** Removes the session's container (if any). */
  async remove(sessionId: string): Promise<void> {
    const box = this.byId.get(sessionId) ?? (this.get(sessionId) as DockerSandbox);
    this.byId.delete(sessionId);
    await box.remove();
  }

  /**
   * Removes containers of this home whose session is not running, then the exec records of
   * such sessions (no retry of their calls can come any more); returns the containers' names.
   */
  async removeOrphans(isRunning: (sessionId: string) => Promise<boolean>): Promise<string[]> {
    const removed = await removeOrphans(this.docker, isRunning, { home: this.settings.home });
    const execs = path.join(path.resolve(this.settings.home), 'execs');
    for (const id of await fs.readdir(execs).catch(() => [] as string[])) {
      // Only after its container is gone: nothing inside can race the recursive removal.
      if (SESSION_ID.test(id) && !this.byId.has(id) && !(await isRunning(id))) {
        await fs.rm(path.join(execs, id), { recursive: true, force: true });
      }
    }
    return removed;
  }
}
