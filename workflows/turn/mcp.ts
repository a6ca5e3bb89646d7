/**
 * The turn's side of MCP: the registry with the session's MCP tools. Questions a server asks in
 * the middle of a call (elicitation) come as the mcpQuestion signal (deterministic/messages.ts) and are
 * read as deterministic/mcp-questions.ts says.
 */
import { BUILTIN_TOOLS } from '../../deterministic/builtin-tools';
import type { McpServerRef, McpToolSet } from '../../deterministic/mcp';
import { mcpToolDefinitions, unavailableServers } from '../../deterministic/mcp-tools';
import { ToolRegistry } from '../../deterministic/tools';
import { customToolDefinitions, type CustomToolSet } from '../../deterministic/custom-tools';

/** The registry of a turn: the built-in tools, the session's custom tools and its MCP tools (`bounded`: see mcp-schema.ts). */
export function turnRegistry(tools: McpToolSet | undefined, servers: readonly McpServerRef[], bounded = false, custom?: CustomToolSet): ToolRegistry {
  const builtin = new Set(BUILTIN_TOOLS.map((t) => t.name));
  return new ToolRegistry([...BUILTIN_TOOLS, ...customToolDefinitions(custom, builtin), ...mcpToolDefinitions(tools, servers, { bounded })], unavailableServers(tools));
}
