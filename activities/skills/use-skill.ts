/**
 * Progressive disclosure of skills. Layer 1: `skillsIndex`, names and descriptions for the
 * system message. Layer 2: `useSkill`, the body of one skill on demand. Layer 3:
 * `skillMounts`, each skill folder mounted read-only at /skills/<name> in the sandbox so the
 * body can tell the model to run its scripts with run_shell.
 */
import { z } from 'zod';
import { describeIssues } from '../../deterministic/tools';
import { toolError, toolOk } from '../../deterministic/errors';
import type { ToolResult } from '../../deterministic/types';
import type { Skill } from './catalog';

/** Where skill folders appear inside the sandbox. */
const SKILLS_MOUNT_ROOT = '/skills';
/** Default cap of a body returned by use_skill (UTF-8 bytes). */
const DEFAULT_SKILL_BODY_BYTES = 20_000;
// Layer 1 stays short: long descriptions are cut in the index (use_skill shows them whole).
const INDEX_DESCRIPTION_CHARS = 240;

/** Arguments of use_skill. */
export const useSkillParams = z.object({ name: z.string().min(1).describe('The skill name, as listed under "Skills" in the system message.') });

/** The sandbox path of a skill's folder. */
export function skillMountPath(name: string): string {
  return `${SKILLS_MOUNT_ROOT}/${name}`;
}

/** The read-only binds a sandbox needs for these skills (layer 3). */
export function skillMounts(skills: readonly Skill[]): { host: string; container: string }[] {
  return skills.map((s) => ({ host: s.folder, container: skillMountPath(s.name) }));
}

/** The "Skills" section of the system message; empty when there are no skills. */
export function skillsIndex(skills: readonly Skill[]): string {
  if (skills.length === 0) return '';
  // By name, whatever order the folders were read in: the index is part of the prompt's cached prefix.
  const sorted = [...skills].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const lines = sorted.map((s) => `- ${s.name}: ${clip(s.description, INDEX_DESCRIPTION_CHARS)}`);
  return [
    '## Skills',
    'Skills are ready-made instructions and scripts for specific tasks. When a task matches one, first call use_skill with its name ' +
      `to read its instructions; its files are mounted read-only in the sandbox at ${SKILLS_MOUNT_ROOT}/<name>.`,
    ...lines,
  ].join('\n');
}

/** Layer 2: the body of one skill (capped) and where its files are; unknown names list the available ones. */
export function useSkill(catalog: { skills: readonly Skill[] }, args: unknown, opts: { maxBytes?: number } = {}): ToolResult {
  const parsed = useSkillParams.safeParse(args);
  if (!parsed.success) return toolError('INVALID_ARGUMENTS', describeIssues(parsed.error), { suggestion: 'pass {"name": "<skill name>"}' });
  const wanted = parsed.data.name.trim().toLowerCase();
  const skill = catalog.skills.find((s) => s.name === wanted);
  const names = catalog.skills.map((s) => s.name);
  if (!skill) {
    const available = names.length ? `available skills: ${names.join(', ')}` : 'no skills are installed';
    return toolError('INVALID_ARGUMENTS', `unknown skill ${JSON.stringify(parsed.data.name)}; ${available}`, {
      suggestion: names.length ? `call use_skill with one of: ${names.join(', ')}` : 'do the task without a skill',
    });
  }
  const mount = skillMountPath(skill.name);
  const max = opts.maxBytes ?? DEFAULT_SKILL_BODY_BYTES;
  const { text, truncated, totalBytes } = capUtf8(skill.body, max);
  const instructions = truncated
    ? `${text}\n\n[truncated: showing the first ${Buffer.byteLength(text)} of ${totalBytes} bytes; ` +
      `read the rest in the sandbox with run_shell, e.g. cat ${mount}/SKILL.md]`
    : text;
  return toolOk({
    name: skill.name,
    description: skill.description,
    instructions,
    truncated,
    mounted_at: mount,
    files: skill.scripts.map((f) => `${mount}/${f}`),
    note: `The files under ${mount} are read-only; run scripts with run_shell (the working folder is /workspace) and write outputs under /workspace.`,
  });
}

/** Cuts text to at most maxBytes of UTF-8 without splitting a character. */
function capUtf8(text: string, maxBytes: number): { text: string; truncated: boolean; totalBytes: number } {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return { text, truncated: false, totalBytes: buf.length };
  let end = Math.max(0, maxBytes);
  // Step back over continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return { text: buf.subarray(0, end).toString('utf8'), truncated: true, totalBytes: buf.length };
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;
}
