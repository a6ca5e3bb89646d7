/**
 * MCP servers: what the worker's owner declares (McpServerSpec: the command or URL the worker
 * starts or reaches), what a session names (McpServerRef: a declared server's name and the
 * session's settings for its tools, a session config input, so replay sees the same servers),
 * and the tool set discovered at session start (kept in history, so replay sees the same tools).
 * Pure data; the clients live on the worker (activities/mcp).
 *
 * Environment values and header values are kept as written: `${VAR}` references are resolved on
 * the worker, so a secret named that way never enters workflow input or history.
 */
import type { Risk } from './types';

/** Per-tool settings of a server: risk (drives the policy) and a decision rule. */
export interface McpToolSettings {
  risk?: Risk;
  decision?: 'allow' | 'ask' | 'deny';
  timeoutMs?: number;
}

interface McpServerCommon {
  /** The server's name in `mcp__<server>__<tool>`: letters, digits, `-`, `_` (no `__`). */
  name: string;
  /** Connecting and listing tools may take this long before the server counts as unavailable. */
  startupTimeoutMs: number;
  /** One tool call may take this long (time spent waiting for a human answer not counted). */
  callTimeoutMs: number;
  /** Risk of the server's tools unless a tool says otherwise (default `write`: never granted by annotations). */
  risk?: Risk;
  /** Decision for the server's tools (a policy rule); without it the policy mode decides (`ask` by default). */
  decision?: 'allow' | 'ask' | 'deny';
  tools?: Record<string, McpToolSettings>;
  /**
   * The owner's word that the server keeps no state of one session another could see: one process
   * (or HTTP connection) then serves every session of an agent within a tenant. Absent: one per
   * session. The worker's declaration decides; a session cannot ask for it.
   */
  shareable?: boolean;
}

/** A server the worker starts as a child process and talks to over stdin/stdout. */
export interface McpStdioSpec extends McpServerCommon {
  transport: 'stdio';
  command: string;
  args: string[];
  /** Added to a minimal environment (PATH, HOME …), never the worker's whole one. Values may use `${VAR}`. */
  env: Record<string, string>;
  cwd?: string;
}

/** A server reached over Streamable HTTP. */
export interface McpHttpSpec extends McpServerCommon {
  transport: 'http';
  url: string;
  /** Values may use `${VAR}` (resolved on the worker). */
  headers: Record<string, string>;
}

export type McpServerSpec = McpStdioSpec | McpHttpSpec;

/**
 * A server as a session names it: the name of a server the worker declared, and the session's
 * settings for its tools (timeouts, risk, decision). What runs is the worker's declaration. The
 * host fields (command, url …) appear only in sessions started before servers were declared on
 * the worker; the worker serves such a session only when they are exactly its own declaration.
 */
export type McpServerRef = McpServerCommon & Partial<Pick<McpStdioSpec, 'command' | 'args' | 'env' | 'cwd'> & Pick<McpHttpSpec, 'url' | 'headers'>> & { transport?: 'stdio' | 'http' };

/** A session's reference to a server: its name and settings, without what runs. */
export function mcpServerRef(spec: McpServerRef): McpServerRef {
  const { transport: _t, command: _c, args: _a, env: _e, cwd: _w, url: _u, headers: _h, shareable: _s, ...ref } = spec;
  return ref;
}

/** Hints a server gives about a tool. Hints only: never a permission. */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** One tool a server offers, as listed by `tools/list`. */
export interface McpToolInfo {
  server: string;
  /** The name the server knows it by. */
  tool: string;
  /** The name the model calls: `mcp__<server>__<tool>` (characters a provider refuses replaced by `_`). */
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: McpToolAnnotations;
}

/** How discovery went for one server. */
export interface McpServerStatus {
  server: string;
  status: 'connected' | 'failed';
  /** Why it failed, in one line. */
  error?: string;
  tools: number;
  /** Tools left out (a name clash, a name too long, a schema that is not an object). */
  skipped?: string[];
}

/** A session's MCP tools: discovered once, re-discovered when a server says its list changed. */
export interface McpToolSet {
  servers: McpServerStatus[];
  tools: McpToolInfo[];
  /** The same list in the message store: model calls name it instead of carrying the schemas. */
  ref?: string;
  /** `tools` is left out (empty): the list is the one stored as `ref` (deterministic/mcp-tool-ref.ts). */
  stored?: true;
}

/**
 * The failure type with which a call run as a local activity asks to be run again as a regular
 * activity: the server asked the user something, or the call was slower than a local one may be.
 */
export const MCP_NEEDS_ACTIVITY = 'MCP_NEEDS_ACTIVITY';

/** How long an MCP call may take as a local activity before it goes again as a regular one. */
export const LOCAL_CALL_BUDGET_MS = 5_000;

/** Names the model may call: what providers accept for function names. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Server names: letters, digits, `-` and `_`, no `__` (it separates server and tool). */
export const SERVER_NAME = /^(?!.*__)[a-zA-Z0-9][a-zA-Z0-9_-]{0,30}$/;

/** `mcp__<server>__<tool>`, with characters providers refuse replaced by `_`. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^a-zA-Z0-9_-]/g, '_')}`;
}

/** The server a qualified name belongs to, or undefined for a name that is not an MCP tool name. */
export function mcpServerOf(name: string): string | undefined {
  const m = /^mcp__(.+?)__/.exec(name);
  return m?.[1];
}
