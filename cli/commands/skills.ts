/** `harness skills`: the skills sessions can use, with their folders, and any broken SKILL.md. */
import type { Command } from 'commander';
import type { CliContext } from '../context';

// The action loads its implementation (the worker's skill catalog) when it runs.
export function registerSkills(program: Command, ctx: CliContext): void {
  program
    .command('skills')
    .description('List the skills (name, description, source folder); broken SKILL.md files are reported and skipped')
    .option('--json', 'print as JSON')
    .action(async (o: { json?: boolean }) => (await import('../actions/skills')).listSkills(ctx, o));
}
