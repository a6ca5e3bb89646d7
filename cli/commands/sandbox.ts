/** `harness sandbox build|doctor`: prepare and check the Docker sandbox. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_SANDBOX_IMAGE, sandboxProblems } from '../../activities/sandbox/docker-sandbox';
import { projectRoot } from '../../lib/paths';
import type { CliContext } from '../context';
import { EXIT, say } from '../output';

export function registerSandbox(program: Command, ctx: CliContext): void {
  const sandbox = program.command('sandbox').description('The Docker sandbox that run_shell uses');
  const image = () => ctx.env.HARNESS_SANDBOX_IMAGE || DEFAULT_SANDBOX_IMAGE;

  sandbox
    .command('build')
    .description('Build the sandbox image offline (debootstrap rootfs + docker import); skipped when it exists')
    .option('--force', 'rebuild even when the image exists')
    .action(async (o: { force?: boolean }) => {
      const script = path.join(projectRoot(), 'sandbox', 'build-rootfs.sh');
      const code = await new Promise<number>((resolve) => {
        const child = spawn('bash', [script, ...(o.force ? ['--force'] : [])], { stdio: 'inherit', env: { ...ctx.env, HARNESS_SANDBOX_IMAGE: image() } });
        child.on('exit', (c) => resolve(c ?? 1));
        child.on('error', () => resolve(1));
      });
      process.exitCode = code === 0 ? EXIT.ok : EXIT.error;
    });

  sandbox
    .command('doctor')
    .description('Say what is missing for the sandbox, one line each (exit 1 when something is)')
    .action(async () => {
      const problems = await sandboxProblems(undefined, image());
      if (!problems.length) {
        say(`sandbox ready: Docker answers and image ${image()} is present`);
        return;
      }
      for (const p of problems) say(`missing: ${p}`);
      process.exitCode = EXIT.error;
    });
}
