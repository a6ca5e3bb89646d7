/**
 * A server's tools as a session offers them to the model: qualified names providers accept,
 * no two tools under one name, only object input schemas (what function calling takes), and
 * no tool the server runs only as a task (this client makes plain calls).
 */
import { ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { TOOL_NAME, mcpToolName, type McpToolInfo } from '../../deterministic/mcp';

/**
 * One page of `tools/list`, the tools left unchecked: the SDK's own result schema refuses the
 * whole page for one bad tool, and one bad definition should cost that tool, not the server.
 */
export const ToolPageSchema = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/**
 * Bounds on what a server may put into the session: its tool list is kept in history and every
 * schema is sent with every model call, so a server (which may be hostile) cannot flood either.
 */
export const MAX_TOOLS_PER_SERVER = 128;
const MAX_SCHEMA_CHARS = 16 * 1024;
export const MAX_DESCRIPTION_CHARS = 2_000;
/**
 * The whole session's MCP tool list (all servers, as JSON). It rides in the turn's input and
 * result and in each re-listing's result, each a Temporal payload (2 MB at most), so it must stay
 * well below that; 512 KiB of schemas is also ~130k tokens in every model call, more than a model
 * can make use of. A tool past it is skipped, saying why.
 */
export const MAX_TOOL_SET_CHARS = 512 * 1024;
/** Reasons kept per server for tools left out (a list of 100,000 bad tools is not repeated into history). */
const MAX_SKIPPED = 20;
/** A tool's name as a reason quotes it. */
const MAX_QUOTED_NAME = 100;

/** Tools as the session offers them; what cannot be offered is in `skipped` with why (at most MAX_SKIPPED reasons and a count). */
export function mapTools(server: string, tools: unknown[]): { tools: McpToolInfo[]; skipped: string[] } {
  const out: McpToolInfo[] = [];
  const skipped: string[] = [];
  let unsaid = 0;
  const skip = (tool: string, why: string) => (skipped.length < MAX_SKIPPED ? skipped.push(`${quoted(tool)}: ${why}`) : unsaid++);
  const byName = new Map<string, string>();
  for (let i = 0; i < tools.length; i++) {
    // Past the last tool that can be offered, the rest are counted, not checked one by one.
    if (out.length >= MAX_TOOLS_PER_SERVER) {
      skipped.push(`${tools.length - i} more: more than ${MAX_TOOLS_PER_SERVER} tools on this server`);
      break;
    }
    const raw = tools[i];
    const tool = String((raw as { name?: unknown })?.name ?? '(no name)');
    const name = mcpToolName(server, tool);
    const other = byName.get(name);
    if (!TOOL_NAME.test(name)) {
      skip(tool, `${quoted(name)} is not a valid tool name (letters, digits, _ and -, at most 64)`);
      continue;
    }
    const parsed = ToolSchema.safeParse(raw);
    if (other !== undefined) skip(tool, `clashes with ${other} as ${name}`);
    else if ((raw as { inputSchema?: { type?: unknown } }).inputSchema?.type !== 'object') skip(tool, 'input schema is not an object');
    else if (!parsed.success) skip(tool, `invalid definition (${(parsed.error.issues[0]?.path.join('.') || 'tool').slice(0, MAX_QUOTED_NAME)}: ${(parsed.error.issues[0]?.message ?? 'invalid').slice(0, 200)})`);
    else if (parsed.data.execution?.taskSupport === 'required') skip(tool, 'runs only as a task (not supported)');
    else if (JSON.stringify(parsed.data.inputSchema).length > MAX_SCHEMA_CHARS) skip(tool, `input schema larger than ${MAX_SCHEMA_CHARS / 1024} KiB`);
    else {
      const t = parsed.data;
      byName.set(name, tool);
      const a = t.annotations;
      const title = a?.title ?? t.title;
      const hints = a ? pick(a, ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) : {};
      const annotations = { ...(title ? { title } : {}), ...hints };
      const info: McpToolInfo = { server, tool, name, description: capText(t.description ?? title ?? '', MAX_DESCRIPTION_CHARS), inputSchema: t.inputSchema as Record<string, unknown> };
      out.push(Object.keys(annotations).length ? { ...info, annotations } : info);
    }
  }
  if (unsaid) skipped.push(`${unsaid} more left out for the reasons above or others`);
  return { tools: out, skipped };
}

/**
 * The tools of a session's servers (in the session's order) within MAX_TOOL_SET_CHARS: a tool
 * past it is left out of its server's list, and its `skipped` says how many and why.
 */
export function withinToolSet<T extends { tools: McpToolInfo[]; status: { tools: number; skipped?: string[] } }>(results: T[]): T[] {
  let left = MAX_TOOL_SET_CHARS;
  return results.map((r) => {
    const kept: McpToolInfo[] = [];
    for (const t of r.tools) {
      // Each tool as it appears in the set's JSON, with its separating comma; a server's list is cut
      // at its first tool that does not fit (a later server's smaller tools may still).
      const size = JSON.stringify(t).length + 1;
      if (size > left) break;
      kept.push(t);
      left -= size;
    }
    if (kept.length === r.tools.length) return r;
    const over = r.tools.length - kept.length;
    const why = `${over} more (${r.tools[kept.length]!.tool}${over > 1 ? ' …' : ''}): the session's MCP tool list would pass ${MAX_TOOL_SET_CHARS / 1024} KiB`;
    return { ...r, tools: kept, status: { ...r.status, tools: kept.length, skipped: [...(r.status.skipped ?? []), why] } };
  });
}

/** A name a server chose, as a reason quotes it: cut short. */
function quoted(name: string): string {
  return name.length > MAX_QUOTED_NAME ? `${name.slice(0, MAX_QUOTED_NAME)}…` : name;
}

function pick<T extends object, K extends keyof T>(o: T, keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (typeof o[k] === 'boolean') out[k] = o[k];
  return out;
}

function capText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
