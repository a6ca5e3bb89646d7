/** `harness sandbox build|doctor`: prepare and check the Docker sandbox. */
import type { Command } from 'commander';
import type { CliContext } from '../context';

// The actions load their implementation (dockerode for `doctor`) when they run.
export function registerSandbox(program: Command, ctx: CliContext): void {
  const sandbox = program.command('sandbox').description('The Docker sandbox that run_shell uses');

  sandbox
    .command('build')
    .description('Build the sandbox image offline (debootstrap rootfs + docker import); skipped when it is up to date')
    .option('--force', 'rebuild even when the image exists')
    .action(async (o: { force?: boolean }) => (await import('../actions/sandbox')).build(ctx, o));

  sandbox
    .command('doctor')
    .description('Say what is missing for the sandbox, one line each (exit 1 when something is)')
    .action(async () => (await import('../actions/sandbox')).doctor(ctx));
}
