/** `harness trust [file]`: trust a project's config file to change the endpoint or model, policy, mounts or network. */
import type { Command } from 'commander';
import type { CliContext } from '../context';

// The action loads its implementation (the config's schema) when it runs.
export function registerTrust(program: Command, ctx: CliContext): void {
  program
    .command('trust')
    .description(
      "Trust a config file found in a project (default ./harness.config.json) to set baseUrl, a scripted model, a looser policy, skill folders, private hosts, MCP servers or a memory namespace; trusted until the file's content changes",
    )
    .argument('[file]', 'the config file', 'harness.config.json')
    .action(async (file: string) => (await import('../actions/trust')).trustConfig(ctx, file));
}
