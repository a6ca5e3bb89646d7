/**
 * The MCP tools of a session as tool definitions: the same registry, validation, policy and call
 * path as the built-in tools. Pure and deterministic (runs in the turn workflow): the JSON input
 * schema a server gave at discovery becomes a zod schema, so arguments are validated before the
 * call and a bad one is an INVALID_ARGUMENTS naming the field.
 */
import { z } from 'zod';
import type { McpServerRef, McpToolInfo, McpToolSet, McpToolSettings } from './mcp';
import type { ToolDefinition } from './tools';
import type { Risk } from './types';
import type { Rule } from './policy/schema';
import { preparedSchema } from './mcp-schema';

/**
 * Risk of a server's tools when its entry says nothing: `write`, which no default rule allows, so
 * under the default mode the call asks. Annotations (`readOnlyHint` …) are the server's own word
 * about itself: shown to the human, never a grant.
 */
export const DEFAULT_MCP_RISK: Risk = 'write';

/** How schemas become zod: `bounded` (every turn but those recorded before it) applies mcp-schema.ts. */
interface McpSchemaOptions {
  bounded?: boolean;
}

/** The definitions of a session's MCP tools (servers that failed discovery have none). */
export function mcpToolDefinitions(set: McpToolSet | undefined, servers: readonly McpServerRef[], opts: McpSchemaOptions = {}): ToolDefinition[] {
  return withSpecs(set, servers).map(([info, spec]) => mcpToolDefinition(info, spec, opts));
}

/** Each discovered tool with its server's entry (a server no longer configured has none: cannot happen within one session). */
function withSpecs(set: McpToolSet | undefined, servers: readonly McpServerRef[]): Array<[McpToolInfo, McpServerRef]> {
  const byName = new Map(servers.map((s) => [s.name, s]));
  return (set?.tools ?? []).flatMap((info): Array<[McpToolInfo, McpServerRef]> => {
    const spec = byName.get(info.server);
    return spec ? [[info, spec]] : [];
  });
}

/** One MCP tool as a definition: risk and timeout from the server entry (per tool first). */
export function mcpToolDefinition(info: McpToolInfo, spec: McpServerRef, opts: McpSchemaOptions = {}): ToolDefinition {
  const settings = toolSettings(spec, info.tool);
  const risk = settings?.risk ?? spec.risk ?? DEFAULT_MCP_RISK;
  return {
    name: info.name,
    description: describeMcpTool(info),
    ...zodInputSchema(info.inputSchema, opts.bounded === true),
    risk,
    source: `mcp:${info.server}`,
    timeoutMs: settings?.timeoutMs ?? spec.callTimeoutMs,
    runsIn: 'activity',
    mcpTool: info.tool,
    ...(info.annotations ? { annotations: info.annotations } : {}),
    // A read (the server says so, or the entry sets its risk to read_only) may run beside the step's other reads.
    ...(info.annotations?.readOnlyHint === true || risk === 'read_only' ? { parallel: true } : {}),
  };
}

/**
 * The decisions server entries make for their discovered tools, as rules: a tool's own `decision`
 * first, else its server's. One rule per tool, so a tool's setting overrides its server's in either
 * direction. They join the turn's rules (like the skills' ones): a deny rule of the policy still
 * wins over an allow here, and without a decision the policy mode decides (`ask` by default).
 */
export function mcpRules(set: McpToolSet | undefined, servers: readonly McpServerRef[]): Rule[] {
  const rules: Rule[] = [];
  for (const [info, spec] of withSpecs(set, servers)) {
    const own = toolSettings(spec, info.tool)?.decision;
    const decision = own ?? spec.decision;
    if (!decision) continue;
    const where = own ? `mcpServers.${info.server}.tools.${info.tool}.decision` : `mcpServers.${info.server}.decision`;
    rules.push({ id: own ? `mcp:${info.server}:${info.tool}` : `mcp:${info.server}`, tool: info.name, decision, reason: `${where} is ${decision}` });
  }
  return rules;
}

/** Why the tools of each server that failed discovery cannot be called. */
export function unavailableServers(set: McpToolSet | undefined): Map<string, string> {
  return new Map((set?.servers ?? []).filter((s) => s.status === 'failed').map((s) => [s.server, s.error ?? 'it did not start']));
}

/** What the model reads about an MCP tool: its description, else its title, else where it comes from. */
export function describeMcpTool(info: McpToolInfo): string {
  const text = info.description.trim() || info.annotations?.title || `Tool ${info.tool} of the MCP server ${info.server}.`;
  return text.length >= 10 ? text : `${text} (MCP server ${info.server})`;
}

/** A tool's own settings in its server entry (a tool named `constructor` or `__proto__` has none unless written). */
function toolSettings(spec: McpServerRef, tool: string): McpToolSettings | undefined {
  return spec.tools && Object.prototype.hasOwnProperty.call(spec.tools, tool) ? spec.tools[tool] : undefined;
}

/**
 * The zod form of a tool's JSON input schema (MCP and custom tools). A schema zod cannot convert (a `$ref` it cannot
 * resolve, an unknown keyword) is checked only as "an object": the server validates it again.
 * Bounded, so is one that is recursive or too costly, and patterns are left to the server
 * (mcp-schema.ts); `checkCost` bounds the work per argument character.
 */
export function zodInputSchema(schema: Record<string, unknown>, bounded: boolean): Pick<ToolDefinition, 'parameters' | 'checkCost'> {
  const prepared = bounded ? preparedSchema(schema) : { schema, cost: undefined };
  if (!prepared) return { parameters: z.looseObject({}) };
  try {
    const converted = z.fromJSONSchema(prepared.schema as Parameters<typeof z.fromJSONSchema>[0]);
    if (converted instanceof z.ZodObject) return { parameters: converted, ...(prepared.cost !== undefined ? { checkCost: prepared.cost } : {}) };
  } catch {
    // fall through to the permissive form
  }
  return { parameters: z.looseObject({}) };
}
