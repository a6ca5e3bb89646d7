/**
 * A server's tools as a session offers them to the model: qualified names providers accept,
 * no two tools under one name, only object input schemas (what function calling takes), and
 * no tool the server runs only as a task (this client makes plain calls).
 */
import { ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { TOOL_NAME, mcpToolName, type McpToolInfo } from '../../common/mcp';

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
export const MAX_SCHEMA_CHARS = 16 * 1024;
export const MAX_DESCRIPTION_CHARS = 2_000;

/** Tools as the session offers them; what cannot be offered is in `skipped` with why. */
export function mapTools(server: string, tools: unknown[]): { tools: McpToolInfo[]; skipped: string[] } {
  const out: McpToolInfo[] = [];
  const skipped: string[] = [];
  const byName = new Map<string, string>();
  for (const raw of tools) {
    const tool = String((raw as { name?: unknown })?.name ?? '(no name)');
    const name = mcpToolName(server, tool);
    const other = byName.get(name);
    const parsed = ToolSchema.safeParse(raw);
    if (!TOOL_NAME.test(name)) skipped.push(`${tool}: ${name} is not a valid tool name (letters, digits, _ and -, at most 64)`);
    else if (other !== undefined) skipped.push(`${tool}: clashes with ${other} as ${name}`);
    else if ((raw as { inputSchema?: { type?: unknown } }).inputSchema?.type !== 'object') skipped.push(`${tool}: input schema is not an object`);
    else if (!parsed.success) skipped.push(`${tool}: invalid definition (${parsed.error.issues[0]?.path.join('.') || 'tool'}: ${parsed.error.issues[0]?.message ?? 'invalid'})`);
    else if (parsed.data.execution?.taskSupport === 'required') skipped.push(`${tool}: runs only as a task (not supported)`);
    else if (JSON.stringify(parsed.data.inputSchema).length > MAX_SCHEMA_CHARS) skipped.push(`${tool}: input schema larger than ${MAX_SCHEMA_CHARS / 1024} KiB`);
    else if (out.length >= MAX_TOOLS_PER_SERVER) skipped.push(`${tool}: more than ${MAX_TOOLS_PER_SERVER} tools on this server`);
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
  return { tools: out, skipped };
}

function pick<T extends object, K extends keyof T>(o: T, keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (typeof o[k] === 'boolean') out[k] = o[k];
  return out;
}

function capText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
