/** What `harness skills` does (cli/commands/skills.ts defines the command and loads this when it runs). */
import { defaultSkills } from '../../activities/worker-defaults';
import type { CliContext } from '../context';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { print, printJson, say } from '../output';

export function listSkills(ctx: CliContext, o: { json?: boolean }): void {
  const { skills, problems } = defaultSkills(ctx.env).catalog();
  if (o.json) return printJson({ skills: skills.map(({ name, description, folder, source }) => ({ name, description, folder, source })), problems });
  // One row per skill: what SKILL.md says may not break the columns or the lines.
  for (const s of skills) print([s.name, s.source, s.description].map((f) => escapeForTerminal(f)).join('\t'));
  if (!skills.length) say('no skills found (add folders with a SKILL.md under skills/ or HARNESS_SKILLS_DIRS)');
  for (const p of problems) say(`skipped: ${p}`);
}
