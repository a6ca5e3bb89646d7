/** What `harness mcp` does (cli/commands/mcp.ts defines the command and loads this when it runs). */
import { McpPool } from '../../activities/mcp/pool';
import { McpUnavailableError } from '../../activities/mcp/errors';
import type { McpServerSpec, McpServerStatus, McpToolInfo } from '../../deterministic/mcp';
import { mcpRules, mcpToolDefinition } from '../../deterministic/mcp-tools';
import { decide } from '../../deterministic/policy';
import { PolicyConfigError, type Policy } from '../../deterministic/policy/schema';
import { resolveMcpConfig } from '../../config/resolve';
import { UsageError, UserError } from '../../machine/errors';
import { sessionState } from '../../client/session-client';
import { refreshMcpToolsUpdate } from '../../deterministic/messages';
import type { CliContext } from '../context';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { EXIT, print, printJson, say } from '../output';
import { snakeKeys } from '../json-casing';

export interface McpFlags {
  config?: string;
  policy?: string;
  session?: string;
  refresh?: boolean;
  json?: boolean;
}

/** One server as `harness mcp` shows it. */
interface ServerReport extends McpServerStatus {
  transport: 'stdio' | 'http';
  target: string;
  toolList?: { name: string; risk: string; decision: string; hints?: string[]; description: string }[];
}

export async function listServers(ctx: CliContext, o: McpFlags): Promise<void> {
  if (o.refresh && !o.session) throw new UsageError('--refresh needs --session <id>', 'the config itself is read fresh every time');
  const servers = o.session ? await sessionServers(ctx, o.session, o.refresh === true) : await configServers(ctx, o);
  if (o.json) printJson(snakeKeys({ servers }));
  else printServers(servers);
  if (servers.some((s) => s.status === 'failed')) process.exitCode = EXIT.error;
}

async function sessionServers(ctx: CliContext, sessionId: string, refresh: boolean): Promise<McpServerStatus[]> {
  const client = await ctx.client();
  if (refresh) {
    try {
      return (await client.workflow.getHandle(sessionId).executeUpdate(refreshMcpToolsUpdate, { args: [] })).servers;
    } catch (err) {
      throw new UserError(`session ${sessionId} cannot refresh its MCP tools: ${(err as Error).message.split('\n')[0]}`, `see \`harness status ${sessionId}\``);
    }
  }
  const state = await sessionState(client, sessionId);
  if (!state.mcp) say(`session ${sessionId} has no MCP servers`);
  return state.mcp ?? [];
}

async function configServers(ctx: CliContext, o: { config?: string; policy?: string }): Promise<ServerReport[]> {
  let resolved: ReturnType<typeof resolveMcpConfig>;
  try {
    resolved = resolveMcpConfig({ ...(o.config ? { config: o.config } : {}), ...(o.policy ? { policy: o.policy } : {}) }, ctx.env, process.cwd(), say);
  } catch (err) {
    if (err instanceof PolicyConfigError) throw new UsageError(err.message, 'use --policy strict|ask|auto (or HARNESS_POLICY)');
    throw err;
  }
  if (!resolved.servers.length) {
    say(`no MCP servers configured${resolved.file ? ` in ${resolved.file}` : ''} (add "mcpServers" to harness.config.json; see docs/mcp.md)`);
    return [];
  }
  // Connected here, in this process, the way a worker would: the same pool, the same timeouts.
  const pool = new McpPool({ env: ctx.env });
  try {
    return await Promise.all(resolved.servers.map((spec) => report(pool, spec, resolved.policy)));
  } finally {
    await pool.closeAll();
  }
}

async function report(pool: McpPool, spec: McpServerSpec, policy: Policy): Promise<ServerReport> {
  const base = { server: spec.name, transport: spec.transport, target: spec.transport === 'stdio' ? [spec.command, ...spec.args].join(' ') : spec.url };
  try {
    const { tools, skipped } = await pool.listTools(spec, { scope: { sessionId: 'harness-mcp' }, timeoutMs: spec.startupTimeoutMs });
    return { ...base, status: 'connected', tools: tools.length, ...(skipped.length ? { skipped } : {}), toolList: tools.map((t) => toolRow(t, spec, policy)) };
  } catch (err) {
    if (!(err instanceof McpUnavailableError)) throw err;
    return { ...base, status: 'failed', error: err.message, tools: 0 };
  }
}

function toolRow(info: McpToolInfo, spec: McpServerSpec, policy: Policy) {
  const def = mcpToolDefinition(info, spec);
  // The same rules a turn applies: the server entry's decisions for this tool, then the policy.
  const d = decide(policy, { tool: def.name, risk: def.risk, args: {} }, mcpRules({ servers: [], tools: [info] }, [spec]));
  const a = info.annotations ?? {};
  const hints = (['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const).filter((k) => a[k] === true);
  return { name: def.name, risk: def.risk, decision: d.decision, ...(hints.length ? { hints } : {}), description: info.description };
}

function printServers(servers: Array<McpServerStatus & Partial<ServerReport>>): void {
  const clean = (s: string) => escapeForTerminal(s);
  for (const s of servers) {
    const head = s.status === 'connected' ? `connected, ${s.tools} tool${s.tools === 1 ? '' : 's'}` : `failed: ${s.error ?? 'unknown'}`;
    print(`${clean(s.server)}${s.transport ? ` (${s.transport} ${clean(s.target ?? '')})` : ''}: ${clean(head)}`);
    for (const t of s.toolList ?? []) {
      const hints = t.hints?.length ? ` [${t.hints.join(', ')}]` : '';
      print(`  ${clean(t.name)}\trisk ${t.risk}\t${t.decision}${hints}\t${clean(t.description.split('\n')[0]!.slice(0, 100))}`);
    }
    for (const k of s.skipped ?? []) say(`  skipped: ${clean(k)}`);
  }
}
