/**
 * What a worker's owner declares in a config file: the MCP servers the worker may start or reach,
 * its model endpoint, the skills folders sessions may name, the private `host:port`s http_request
 * may reach and the agents sessions may run as (activities/declarations.ts checks sessions against
 * them). The file is the one `harness worker` was given (--config, HARNESS_CONFIG) or finds in its
 * working directory; found there, it declares nothing until trusted (`harness trust`), like any
 * untrusted file.
 */
import path from 'node:path';
import type { McpServerSpec } from '../deterministic/mcp';
import { ignoredNote, loadFileConfig } from './resolve';
import { resolveMcpServers } from './mcp';
import { agentsOfFile, type AgentSpec } from './agents';
import type { WebhookDeclaration } from '../deterministic/webhook';

/** What a worker's owner declares; every list may be empty. */
export interface Declared {
  mcpServers?: readonly McpServerSpec[];
  /** Model endpoints (base URLs); declared by origin: scheme, host and port. */
  modelEndpoints?: readonly string[];
  /** Folders of skills a session may name (beside the ones every session gets). */
  skillFolders?: readonly string[];
  /** `host:port` entries a session's `network.allowPrivateHosts` may name. */
  privateHosts?: readonly string[];
  /** Agents sessions may name, with their settings (config/agents.ts). */
  agents?: readonly AgentSpec[];
  /** Webhooks sessions may name (`notify.url`), each with the name of its signing secret (`env:NAME`). */
  webhooks?: readonly WebhookDeclaration[];
}

/** The declarations of a config file (the worker's own); `note` hears what an untrusted one may not declare. */
export function declaredByConfig(explicit: string | undefined, env: NodeJS.ProcessEnv, cwd: string, note?: (line: string) => void): Declared & { file?: string } {
  const loaded = loadFileConfig(explicit, env, cwd);
  const ignored = ignoredNote(loaded, cwd);
  if (ignored) note?.(ignored);
  const { config, file } = loaded;
  const dir = file ? path.dirname(file) : cwd;
  const mcpServers = resolveMcpServers(config.mcpServers, dir);
  const agents = file ? agentsOfFile(config.agents, { file, servers: mcpServers, ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}), ...(config.prices ? { prices: config.prices } : {}) }) : [];
  return {
    ...(file ? { file } : {}),
    mcpServers,
    modelEndpoints: config.baseUrl ? [config.baseUrl] : [],
    skillFolders: (config.skills?.folders ?? []).map((f) => path.resolve(dir, f)),
    privateHosts: config.network?.allowPrivateHosts ?? [],
    agents,
  };
}
