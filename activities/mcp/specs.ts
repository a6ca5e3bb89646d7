/** An MCP tool as the model sees it: the server's own JSON input schema, not a zod round trip. */
import { DEFAULT_MCP_RISK, describeMcpTool } from '../../deterministic/mcp-tools';
import type { McpToolInfo } from '../../deterministic/mcp';
import type { ToolSpec } from '../../deterministic/types';

export function mcpToolSpec(info: McpToolInfo): ToolSpec {
  const { $schema: _drop, ...parameters } = info.inputSchema;
  return {
    name: info.name,
    description: describeMcpTool(info),
    parameters: { type: 'object', properties: {}, ...parameters },
    risk: DEFAULT_MCP_RISK, // not sent to the model; the policy uses the turn's definitions
    source: `mcp:${info.server}`,
    timeoutMs: 0,
  };
}
