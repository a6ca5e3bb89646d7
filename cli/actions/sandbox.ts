/** What `harness sandbox build|doctor` do (cli/commands/sandbox.ts defines them and loads this when one runs). */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { DEFAULT_SANDBOX_IMAGE } from '../../activities/sandbox/docker-errors';
import { sandboxProblems } from '../../activities/sandbox/containers';
import { projectRoot } from '../../machine/paths';
import type { CliContext } from '../context';
import { EXIT, say } from '../output';

function image(ctx: CliContext): string {
  return ctx.env.HARNESS_SANDBOX_IMAGE || DEFAULT_SANDBOX_IMAGE;
}

export async function build(ctx: CliContext, o: { force?: boolean }): Promise<void> {
  const script = path.join(projectRoot(), 'sandbox', 'build-rootfs.sh');
  const code = await new Promise<number>((resolve) => {
    const child = spawn('bash', [script, ...(o.force ? ['--force'] : [])], { stdio: 'inherit', env: { ...ctx.env, HARNESS_SANDBOX_IMAGE: image(ctx) } });
    child.on('exit', (c) => resolve(c ?? 1));
    child.on('error', () => resolve(1));
  });
  process.exitCode = code === 0 ? EXIT.ok : EXIT.error;
}

export async function doctor(ctx: CliContext): Promise<void> {
  const problems = await sandboxProblems(undefined, image(ctx));
  if (!problems.length) {
    say(`sandbox ready: Docker answers and image ${image(ctx)} is present`);
    return;
  }
  for (const p of problems) say(`missing: ${p}`);
  process.exitCode = EXIT.error;
}
