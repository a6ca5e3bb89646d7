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
import { isCancellation, patched } from '@temporalio/workflow';
import { rootCauseMessage } from '../../deterministic/errors';
import type { DiscoveredMcpTools, DiscoverMcpInput, LoadMcpToolsInput } from '../../deterministic/activity-types';
import { storedListRef, toolSetByRef } from '../../deterministic/mcp-tool-ref';
import { BUILTIN_TOOLS } from '../../deterministic/builtin-tools';
import type { McpServerRef, McpToolInfo, McpToolSet } from '../../deterministic/mcp';
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

/**
 * The turn's MCP tool set with its list: a set its session carries by reference (the session's
 * `mcp-tools-by-ref` patch) is read back from the store once, by an activity, since the turn
 * validates calls against the schemas and builds policy rules from them. A set with its list
 * inline (sessions from before) is the turn's as it is.
 */
export async function withToolList(
  set: McpToolSet | undefined,
  sessionId: string,
  load: (input: LoadMcpToolsInput) => Promise<McpToolInfo[]>,
): Promise<McpToolSet | undefined> {
  const ref = storedListRef(set);
  if (!ref) return set;
  patched(TOOLS_BY_REF);
  const { stored: _s, ...named } = set!;
  try {
    return { ...named, tools: await load({ sessionId, ref }) };
  } catch (err) {
    // The list could not be read (after the store activity's retries): the turn goes on without
    // these servers' tools, whose calls then answer MCP_SERVER_UNAVAILABLE with why.
    if (isCancellation(err)) throw err;
    const error = `the tool list could not be read from the store: ${rootCauseMessage(err)}`;
    return { tools: [], servers: named.servers.map((s) => ({ ...s, status: 'failed' as const, error, tools: 0 })) };
  }
}

/** The set a turn hands on (its result, its next run): by reference, in turns recorded since the patch. */
export function handedOn(set: McpToolSet): McpToolSet {
  return patched(TOOLS_BY_REF) ? toolSetByRef(set) : set;
}

/** Tool sets travel by store reference in sessions and turns recorded since this patch. */
export const TOOLS_BY_REF = 'mcp-tools-by-ref';

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
