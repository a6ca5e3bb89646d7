/**
 * What a worker gets when its owner passes nothing else: the skills every session sees and the
 * Docker sandboxes with those skills mounted. `harness worker`, createHarnessWorker and
 * createActivities build them the same way.
 */
import path from 'node:path';
import { projectRoot } from '../machine/paths';
import { SandboxPool } from './sandbox/pool';
import { SkillsProvider } from './skills/provider';

/** The project's skills/ folder plus HARNESS_SKILLS_DIRS (path-separated). */
export function defaultSkills(env: Record<string, string | undefined>): SkillsProvider {
  const extra = (env.HARNESS_SKILLS_DIRS ?? '').split(path.delimiter).filter(Boolean);
  return new SkillsProvider([path.join(projectRoot(), 'skills'), ...extra]);
}

/** Docker sandboxes with the session's skills mounted read-only. */
export function defaultSandboxes(home: string, env: Record<string, string | undefined>, skills: SkillsProvider): SandboxPool {
  return new SandboxPool({
    home,
    ...(env.HARNESS_SANDBOX_IMAGE ? { image: env.HARNESS_SANDBOX_IMAGE } : {}),
    skillsMounts: (sessionId) => skills.mounts(sessionId),
  });
}
