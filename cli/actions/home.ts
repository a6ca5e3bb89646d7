/** What `harness home` does (cli/commands/home.ts defines the command and loads this when it runs). */
import path from 'node:path';
import { adoptHome } from '../../machine/home-mark';
import { harnessHome } from '../../machine/paths';
import { realOrAbsolute } from '../../machine/state-dir';
import type { CliContext } from '../context';
import { print, say } from '../output';

export function home(ctx: CliContext, o: { adopt?: string }): void {
  if (o.adopt === undefined) {
    print(ctx.home);
    return;
  }
  const folder = path.resolve(o.adopt);
  adoptHome(folder, ctx.env);
  const inUse = realOrAbsolute(harnessHome(ctx.env)) === realOrAbsolute(folder);
  say(`adopted ${folder} as your harness home${inUse ? '' : `: use it with HARNESS_HOME=${folder}`}`);
  print(folder);
}
