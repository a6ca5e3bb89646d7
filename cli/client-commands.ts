/**
 * Which compiled CLI a command line runs. Apart from main.ts so bin/harness.js can choose
 * before loading either.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Commands that only talk to Temporal as a client, and the module of cli/actions/ each runs.
 * They load the Temporal API's definitions a part at a time (client/lean-proto/install.ts) and
 * run from the CLI's bundle (scripts/bundle-cli.ts), which holds their actions and the client's
 * packages. Commands that may host a worker in their process load the packages from node_modules
 * as they are: a worker loads its own copy of them, and the SDK expects one copy per process.
 */
export const CLIENT_COMMANDS: ReadonlyMap<string, string> = new Map([
  ['status', 'inspect'],
  ['sessions', 'inspect'],
  ['answer', 'inspect'],
  ['end', 'inspect'],
  ['approve', 'approvals'],
  ['deny', 'approvals'],
  ['wake', 'wake'],
  ['send', 'send'],
  ['pending', 'pending'],
  ['show', 'show'],
  ['cancel', 'cancel'],
]);

/** The bundle's entry, from the package root (written by `npm run build`). */
export const CLI_BUNDLE = path.join('dist', 'cli', 'bundle', 'main.js');

/** The module to run `argv` (without node and script) with: the bundle for a client command when it was built, else dist/cli/main.js. */
export function cliModule(argv: readonly string[], root: string): string {
  const bundle = path.join(root, CLI_BUNDLE);
  if (CLIENT_COMMANDS.has(argv[0] ?? '') && existsSync(bundle)) return bundle;
  return path.join(root, 'dist', 'cli', 'main.js');
}
