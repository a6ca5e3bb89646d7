/**
 * Who an MCP server's process serves. By default one session: a stateful server (a working
 * directory, a memory, a browser) must not carry one user's state into another's session. A
 * server its owner declares `shareable` serves every session of one agent within one tenant, and
 * never sessions of another agent or tenant. Pure data: the workflow puts the scope in the MCP
 * activities' inputs, the worker's pool keys its connections by it (activities/mcp/pool-key.ts).
 */
import type { SessionMetadata } from './metadata';

export interface McpScope {
  sessionId: string;
  /** The agent the session runs as (absent: none). */
  agent?: string;
  /** The tenant the session's metadata names (absent: none). */
  tenant?: string;
}

// The metadata fields read as a tenant, in this order: applications spell it several ways.
const TENANT_FIELDS = ['tenant', 'tenantId', 'tenant_id'] as const;

/** The agent a session runs as and the tenant its metadata names: what a shareable server's process is keyed by. */
export function mcpScopeOf(config: { agent?: string; metadata?: SessionMetadata }): Omit<McpScope, 'sessionId'> {
  const tenant = tenantOf(config.metadata);
  return { ...(config.agent !== undefined ? { agent: config.agent } : {}), ...(tenant !== undefined ? { tenant } : {}) };
}

function tenantOf(metadata: SessionMetadata | undefined): string | undefined {
  for (const field of TENANT_FIELDS) {
    const v = metadata?.[field];
    if (typeof v === 'string' || typeof v === 'number') return String(v);
  }
  return undefined;
}
