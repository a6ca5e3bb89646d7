/**
 * Who an MCP server process serves, with a real stateful server (a key/value map in memory): one
 * process per session by default, so two sessions never see each other's keys; a server declared
 * shareable serves the sessions of one agent within one tenant, never another agent's or tenant's.
 */
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { McpPool } from '../../../activities/mcp/pool';
import { mcpScopeOf } from '../../../deterministic/mcp-scope';
import { mcpServerRef } from '../../../deterministic/mcp';
import { mcpServersSchema, resolveMcpServers } from '../../../config/mcp';
import type { McpScope } from '../../../deterministic/mcp-scope';
import { alive, stdioSpec, textOf, until } from '../../support/mcp-servers';

const KV = path.join(__dirname, '..', '..', 'support', 'mcp-kv-server.cjs');
const kv = (more = {}) => stdioSpec('kv', process.execPath, [KV], more);

const pools: McpPool[] = [];
function newPool(idleMs?: number): McpPool {
  const pool = new McpPool({ env: {}, ...(idleMs ? { idleMs } : {}) });
  pools.push(pool);
  return pool;
}
afterAll(() => Promise.all(pools.map((p) => p.closeAll())));

const put = (pool: McpPool, spec: ReturnType<typeof kv>, scope: McpScope, key: string, value: string) =>
  pool.callTool(spec, 'put', { key, value }, { scope, timeoutMs: 30_000 });
const get = async (pool: McpPool, spec: ReturnType<typeof kv>, scope: McpScope, key: string) =>
  textOf(await pool.callTool(spec, 'get', { key }, { scope, timeoutMs: 30_000 }));

describe('MCP server processes and sessions', () => {
  it('two sessions each get their own process: neither sees the other\'s state', async () => {
    const pool = newPool();
    const spec = kv();
    const a = { sessionId: 's-a' };
    const b = { sessionId: 's-b' };
    await put(pool, spec, a, 'secret', 'from-a');
    expect(await get(pool, spec, a, 'secret')).toBe('secret=from-a');
    expect(await get(pool, spec, b, 'secret')).toBe('secret is not set');
    await put(pool, spec, b, 'secret', 'from-b');
    expect(await get(pool, spec, a, 'secret')).toBe('secret=from-a');
    const pids = pool.stats().map((s) => s.pid);
    expect(new Set(pids).size).toBe(2);
    // Even sessions of one agent and tenant: sharing is the server owner's word, not the default.
    const sameAgent = { sessionId: 's-c', agent: 'support', tenant: 't1' };
    expect(await get(pool, spec, sameAgent, 'secret')).toBe('secret is not set');
  });

  it('a shareable server is shared within one agent and tenant only', async () => {
    const pool = newPool();
    const spec = kv({ shareable: true });
    const one = { sessionId: 's-1', agent: 'support', tenant: 'acme' };
    const two = { sessionId: 's-2', agent: 'support', tenant: 'acme' };
    await put(pool, spec, one, 'note', 'shared');
    expect(await get(pool, spec, two, 'note')).toBe('note=shared');
    expect(await get(pool, spec, { sessionId: 's-3', agent: 'billing', tenant: 'acme' }, 'note')).toBe('note is not set');
    expect(await get(pool, spec, { sessionId: 's-4', agent: 'support', tenant: 'globex' }, 'note')).toBe('note is not set');
    expect(await get(pool, spec, { sessionId: 's-5' }, 'note')).toBe('note is not set');
    expect(pool.stats().filter((s) => s.connected)).toHaveLength(4);
  });

  it('`shareable` is the owner\'s declaration in mcpServers, and never part of what a session names', () => {
    const [spec] = resolveMcpServers({ kv: { command: process.execPath, args: [KV], shareable: true } }, __dirname);
    expect(spec).toMatchObject({ name: 'kv', shareable: true });
    expect(resolveMcpServers({ kv: { command: process.execPath } }, __dirname)[0]).not.toHaveProperty('shareable');
    expect(mcpServerRef(spec!)).not.toHaveProperty('shareable');
    expect(mcpServersSchema.safeParse({ kv: { command: 'x', shareable: 'yes' } }).success).toBe(false);
  });

  it('the tenant is read from the session metadata', () => {
    expect(mcpScopeOf({ agent: 'support', metadata: { tenant: 'acme', user: 'u1' } })).toEqual({ agent: 'support', tenant: 'acme' });
    expect(mcpScopeOf({ metadata: { tenantId: 42 } })).toEqual({ tenant: '42' });
    expect(mcpScopeOf({ metadata: { tenant: { nested: true } } })).toEqual({});
    expect(mcpScopeOf({})).toEqual({});
  });

  it('an idle session\'s process is closed and forgotten', async () => {
    const pool = newPool(400);
    const spec = kv();
    await put(pool, spec, { sessionId: 's-idle' }, 'k', 'v');
    const pid = pool.stats()[0]!.pid!;
    await until(() => pool.stats().length === 0 && !alive(pid));
    // A new call of that session starts afresh: the state went with the process.
    expect(await get(pool, spec, { sessionId: 's-idle' }, 'k')).toBe('k is not set');
  });

  it('a server that dies mid-session is restarted for that session only', async () => {
    const pool = newPool();
    const spec = kv();
    const a = { sessionId: 's-dies' };
    const b = { sessionId: 's-lives' };
    await put(pool, spec, a, 'k', 'a');
    await put(pool, spec, b, 'k', 'b');
    const pidA = pool.stats().find((s) => s.scope.sessionId === 's-dies')!.pid!;
    const pidB = pool.stats().find((s) => s.scope.sessionId === 's-lives')!.pid!;
    process.kill(pidA, 'SIGKILL');
    await until(() => !pool.stats().find((s) => s.scope.sessionId === 's-dies')!.connected);
    expect(await get(pool, spec, a, 'k')).toBe('k is not set');
    expect(await get(pool, spec, b, 'k')).toBe('k=b');
    expect(pool.stats().find((s) => s.scope.sessionId === 's-lives')!.pid).toBe(pidB);
  });
});
