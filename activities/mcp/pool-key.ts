/**
 * How the pool names its connections: the server as started (command or URL) and who it serves.
 * A server runs one process per session unless its owner declared it `shareable`; then one per
 * agent and tenant (deterministic/mcp-scope.ts), so sharing never crosses agents or tenants.
 */
import type { McpServerSpec } from '../../deterministic/mcp';
import type { McpScope } from '../../deterministic/mcp-scope';
import { canonicalJson } from '../../deterministic/digest';

/**
 * Connections are shared by specs that start the same server the same way; policy settings
 * (risk, decisions, timeouts) do not change the process, so they are not part of the key.
 */
export function specKey(spec: McpServerSpec): string {
  const { name, transport } = spec;
  const fields = spec.transport === 'stdio' ? { name, transport, command: spec.command, args: spec.args, env: spec.env, cwd: spec.cwd ?? null } : { name, transport, url: spec.url, headers: spec.headers };
  return canonicalJson(fields);
}

/** Who one connection of `spec` serves: the session, or (shareable) the agent within its tenant. */
export function scopeKey(spec: McpServerSpec, scope: McpScope): string {
  if (spec.shareable) return canonicalJson({ agent: scope.agent ?? null, tenant: scope.tenant ?? null });
  return canonicalJson({ session: scope.sessionId });
}

/** The pool's key of one connection. */
export function poolKey(spec: McpServerSpec, scope: McpScope): string {
  return `${specKey(spec)}\n${scopeKey(spec, scope)}`;
}
