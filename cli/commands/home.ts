/** `harness home [--adopt <folder>]`: where this project's state lives; adopting a folder made by an older harness. */
import type { Command } from 'commander';
import type { CliContext } from '../context';

export function registerHome(program: Command, ctx: CliContext): void {
  program
    .command('home')
    .description(
      "Print this project's state folder (HARNESS_HOME, else one per project under ~/.local/state/harness), creating and marking it when new; with --adopt, mark a folder as yours so HARNESS_HOME may name it",
    )
    .option('--adopt <folder>', 'mark this folder as your own harness home whatever it holds (a ./.harness made by an older harness, a home you moved); only for a folder you trust: its sessions, memories and pid files are used as they are')
    .action(async (o: { adopt?: string }) => (await import('../actions/home')).home(ctx, o));
}
