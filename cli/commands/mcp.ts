/**
 * `harness mcp`: the MCP servers of the config (connected here, each within its startup timeout)
 * with their tools, each tool's risk and what the policy decides for it; or, with --session, the
 * servers as that session discovered them (`--refresh` lists them again now).
 */
import type { Command } from 'commander';
import type { CliContext } from '../context';
import type { McpFlags } from '../actions/mcp';
import { parseSessionId } from '../args';

// The action loads its implementation (the MCP SDK, the policy) when it runs.
export function registerMcp(program: Command, ctx: CliContext): void {
  program
    .command('mcp')
    .description(
      'List the MCP servers of the config: status (connected, or failed with why), their tools with risk and the policy decision; ' +
        'with --session, the servers as that session found them (--refresh lists them again)',
    )
    .option('--config <file>', 'config file (default: ./harness.config.json or HARNESS_CONFIG)')
    .option('--policy <mode>', 'policy mode to show decisions for (strict, ask, auto)')
    .option('--session <id>', "show a session's servers instead of connecting", parseSessionId)
    .option('--refresh', 'with --session: list the servers again now (the session must be idle)')
    .option('--json', 'print as JSON')
    .action(async (o: McpFlags) => (await import('../actions/mcp')).listServers(ctx, o));
}
