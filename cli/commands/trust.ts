/** `harness trust [file]`: trust a project's config file to change the endpoint or model, policy, mounts or network. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { parseConfigFile } from '../../lib/config';
import { UsageError } from '../../lib/errors';
import { sensitiveSettings, trust, trustFile } from '../../lib/trust';
import type { CliContext } from '../context';
import { say } from '../output';

export function registerTrust(program: Command, ctx: CliContext): void {
  program
    .command('trust')
    .description(
      "Trust a config file found in a project (default ./harness.config.json) to set baseUrl, a scripted model, a looser policy, skill folders, private hosts, MCP servers or a memory namespace; trusted until the file's content changes",
    )
    .argument('[file]', 'the config file', 'harness.config.json')
    .action((file: string) => {
      const full = path.resolve(file);
      if (!existsSync(full)) throw new UsageError(`config file ${full} does not exist`, 'pass the path of the harness.config.json to trust');
      // Validated first (errors name the field, never quote the file): a broken file is not worth trusting.
      const config = parseConfigFile(full);
      const entry = trust(full, ctx.env);
      say(`trusted ${entry.path} (sha256 ${entry.sha256.slice(0, 12)}…, recorded in ${trustFile(ctx.env)})`);
      for (const s of sensitiveSettings(config)) say(`  it sets ${s}`);
    });
}
