/**
 * Policy rules a session's skills bring: each script of a skill may be run through its
 * interpreter at its read-only sandbox path (`python3 /skills/word_count/count.py …`). Skills
 * come from the worker's trusted folders, so their own scripts run without asking, while the
 * arguments still go through every deny rule (paths outside the workspace, expansions…).
 */
import * as path from 'node:path';
import type { Rule } from '../../deterministic/policy/schema';
import type { Skill } from './catalog';
import { skillMountPath } from './use-skill';

// How each kind of script is started; a script of another kind is not allowed by a rule.
const INTERPRETERS: Record<string, string[]> = {
  '.py': ['python3'],
  '.sh': ['sh', 'bash'],
};

/** One allow rule per skill script and interpreter, matching the exact script path. */
export function skillRules(skills: readonly Skill[]): Rule[] {
  return skills.flatMap((skill) =>
    skill.scripts.flatMap((script) =>
      (INTERPRETERS[path.extname(script)] ?? []).map((interpreter) => {
        const prefix = `${interpreter} ${skillMountPath(skill.name)}/${script}`;
        return {
          id: `skill:${skill.name}/${script}`,
          tool: 'run_shell',
          decision: 'allow' as const,
          when: { commandPrefix: prefix },
          reason: `script of the skill ${skill.name}`,
        };
      }),
    ),
  );
}
