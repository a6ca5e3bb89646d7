/**
 * The turn's side of MCP: the registry with the session's MCP tools, and listing them again.
 * Questions a server asks in the middle of a call (elicitation) come as the mcpQuestion signal
 * (deterministic/messages.ts) and are read as deterministic/mcp-questions.ts says.
 *
 * Listing again follows a server saying its list changed. The loop asks at most once a step
 * (loop.ts); each re-listing names the set the turn has by reference (never inline), a list that
 * did not change comes back as "unchanged" (nothing repeated), and one run of a turn takes in at
 * most MAX_MCP_RELISTS_PER_RUN lists that did change: after that it keeps offering the last one.
 * So a server that announces a change after every call, with a list near its bound, adds a
 * bounded amount to the turn's history (it grew past Temporal's 50 MB, which ends a workflow, by
 * the whole list twice per call). Turns recorded before carried the set inline and re-listed
 * after every such call: they replay as they ran (the `mcp-relist-by-ref` patch, taken at a run's
 * first re-listing).
 */
import { patched } from '@temporalio/workflow';
import type { DiscoveredMcpTools, DiscoverMcpInput } from '../../deterministic/activity-types';
import { BUILTIN_TOOLS } from '../../deterministic/builtin-tools';
import type { McpServerRef, McpToolSet } from '../../deterministic/mcp';
import { mcpToolDefinitions, unavailableServers } from '../../deterministic/mcp-tools';
import { ToolRegistry, type ToolDefinition } from '../../deterministic/tools';
import { customToolDefinitions, type CustomToolSet } from '../../deterministic/custom-tools';
import type { McpScope } from '../../deterministic/mcp-scope';

/** The registry of a turn: the built-in tools, the session's custom tools and its MCP tools (bounded: see deterministic/mcp-schema.ts). */
export function turnRegistry(tools: McpToolSet | undefined, servers: readonly McpServerRef[], custom?: CustomToolSet, agents: readonly ToolDefinition[] = []): ToolRegistry {
  const builtin = new Set(BUILTIN_TOOLS.map((t) => t.name));
  const defs = [...BUILTIN_TOOLS, ...customToolDefinitions(custom, builtin), ...mcpToolDefinitions(tools, servers, { bounded: true })];
  // Sub-agents (agent__<name>) after the rest: a tool already of that name keeps it.
  const taken = new Set(defs.map((d) => d.name));
  return new ToolRegistry([...defs, ...agents.filter((a) => !taken.has(a.name))], unavailableServers(tools));
}

/** Lists that changed which one run of a turn takes in (each is in its history once, at most 512 KiB). */
export const MAX_MCP_RELISTS_PER_RUN = 4;

/** The turn's re-listing: (the set it has, the servers to list again) → the set to offer from the next step. */
export function mcpRelister(
  discover: (input: DiscoverMcpInput) => Promise<DiscoveredMcpTools>,
  at: McpScope,
  servers: McpServerRef[],
): (previous: McpToolSet, only: string[]) => Promise<McpToolSet> {
  let byRef: boolean | undefined;
  let changed = 0;
  return async (previous, only) => {
    byRef ??= patched('mcp-relist-by-ref');
    if (!byRef) return discover({ ...at, servers, only, previous });
    if (changed >= MAX_MCP_RELISTS_PER_RUN) return previous;
    const named = { servers: previous.servers, ...(previous.ref ? { ref: previous.ref } : {}) };
    const { unchanged, ...set } = await discover({ ...at, servers, only, previousRef: named });
    if (unchanged) return previous;
    changed++;
    return set;
  };
}
