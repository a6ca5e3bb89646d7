/**
 * The skills each session sees: the worker's folders (the project's `skills/` first) plus the
 * session's own, loaded on demand and cached per folder list. Broken SKILL.md files are
 * reported (at worker start and in prepareTurn) and skipped.
 */
import path from 'node:path';
import { loadSkills, type SkillCatalog } from './catalog';
import { skillMounts } from './use-skill';
import type { ReadOnlyMount } from '../sandbox/containers';

export class SkillsProvider {
  private readonly sessionFolders = new Map<string, string[]>();
  private readonly cache = new Map<string, SkillCatalog>();

  constructor(private readonly baseFolders: string[]) {}

  /** Records the session's extra folders (from its config, via prepareTurn). */
  setSessionFolders(sessionId: string, folders: string[] = []): void {
    this.sessionFolders.set(sessionId, folders.map((f) => path.resolve(f)));
  }

  /** The session's catalog. */
  catalog(sessionId?: string): SkillCatalog {
    const folders = [...this.baseFolders, ...((sessionId && this.sessionFolders.get(sessionId)) || [])];
    const key = folders.join('\n');
    let cat = this.cache.get(key);
    if (!cat) {
      cat = loadSkills(folders);
      this.cache.set(key, cat);
    }
    return cat;
  }

  /** Read-only mounts of the session's skills for its sandbox (/skills/<name>). */
  mounts(sessionId: string): ReadOnlyMount[] {
    return skillMounts(this.catalog(sessionId).skills);
  }
}
