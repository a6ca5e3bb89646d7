/** `harness skills`: the skills sessions can use, with their folders, and any broken SKILL.md. */
import type { Command } from 'commander';
import { defaultSkills } from '../../activities';
import type { CliContext } from '../context';
import { escapeForTerminal } from '../../lib/terminal/escape';
import { print, printJson, say } from '../output';

export function registerSkills(program: Command, ctx: CliContext): void {
  program
    .command('skills')
    .description('List the skills (name, description, source folder); broken SKILL.md files are reported and skipped')
    .option('--json', 'print as JSON')
    .action((o: { json?: boolean }) => {
      const { skills, problems } = defaultSkills(ctx.env).catalog();
      if (o.json) return printJson({ skills: skills.map(({ name, description, folder, source }) => ({ name, description, folder, source })), problems });
      // One row per skill: what SKILL.md says may not break the columns or the lines.
      for (const s of skills) print([s.name, s.source, s.description].map((f) => escapeForTerminal(f)).join('\t'));
      if (!skills.length) say('no skills found (add folders with a SKILL.md under skills/ or HARNESS_SKILLS_DIRS)');
      for (const p of problems) say(`skipped: ${p}`);
    });
}
