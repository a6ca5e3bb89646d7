/** What `harness trust` does (cli/commands/trust.ts defines the command and loads this when it runs). */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseConfigFile } from '../../config/resolve';
import { UsageError } from '../../machine/errors';
import { sensitiveSettings, trust, trustFile } from '../../config/trust';
import type { CliContext } from '../context';
import { say } from '../output';

export function trustConfig(ctx: CliContext, file: string): void {
  const full = path.resolve(file);
  if (!existsSync(full)) throw new UsageError(`config file ${full} does not exist`, 'pass the path of the harness.config.json to trust');
  // Validated first (errors name the field, never quote the file): a broken file is not worth trusting.
  const config = parseConfigFile(full);
  const entry = trust(full, ctx.env);
  say(`trusted ${entry.path} (sha256 ${entry.sha256.slice(0, 12)}…, recorded in ${trustFile(ctx.env)})`);
  for (const s of sensitiveSettings(config)) say(`  it sets ${s}`);
}
