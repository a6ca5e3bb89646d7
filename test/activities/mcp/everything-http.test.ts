import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpUnavailableError } from '../../../activities/mcp/errors';
import { McpPool } from '../../../activities/mcp/pool';
import { mcpResultToToolResult } from '../../../activities/mcp/results';
import { freePort } from '../../../scripts/free-port';
import { httpSpec, startEverythingHttp, textOf } from '../../support/mcp-servers';

/** The session the pool's connections serve here. */
const S = { sessionId: 's-pool-test' };

describe('McpPool with server-everything over Streamable HTTP', () => {
  let server: Awaited<ReturnType<typeof startEverythingHttp>>;
  const pool = new McpPool({ env: { TOKEN: 'secret-token' } });
  beforeAll(async () => {
    server = await startEverythingHttp();
  });
  afterAll(async () => {
    await pool.closeAll();
    await server?.stop();
  });

  it('lists tools and calls them on one session', async () => {
    const spec = httpSpec(server.url, { headers: { Authorization: 'Bearer ${TOKEN}' } });
    const { tools, skipped } = await pool.listTools(spec, { scope: S, timeoutMs: 30_000 });
    expect(skipped).toEqual(['simulate-research-query: runs only as a task (not supported)']);
    expect(pool.takeListChanged(spec, S)).toBe(false);
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['mcp__everything-http__echo', 'mcp__everything-http__get-sum']));
    expect(textOf(await pool.callTool(spec, 'echo', { message: 'over http' }, { scope: S, timeoutMs: 30_000 }))).toBe('Echo: over http');
    expect(textOf(await pool.callTool(spec, 'get-sum', { a: 1, b: 2 }, { scope: S, timeoutMs: 30_000 }))).toContain('3');
    const image = mcpResultToToolResult('everything-http', 'get-tiny-image', await pool.callTool(spec, 'get-tiny-image', {}, { scope: S, timeoutMs: 30_000 }));
    expect(image).toMatchObject({ ok: true, result: { media: [{ type: 'image', mimeType: 'image/png' }] } });
    const error = mcpResultToToolResult('everything-http', 'get-sum', await pool.callTool(spec, 'get-sum', { a: [], b: 2 }, { scope: S, timeoutMs: 30_000 }));
    expect(error).toMatchObject({ ok: false, error_type: 'MCP_TOOL_ERROR' });
    expect(pool.stats()).toEqual([expect.objectContaining({ server: 'everything-http', connected: true, spawns: 1, calls: 4 })]);
  });

  it('times out a long call and keeps working', async () => {
    const spec = httpSpec(server.url);
    const err = await pool.callTool(spec, 'trigger-long-running-operation', { duration: 6, steps: 3 }, { scope: S, timeoutMs: 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpUnavailableError);
    expect((err as Error).message).toMatch(/did not answer within 1s/);
    expect(textOf(await pool.callTool(spec, 'echo', { message: 'still here' }, { scope: S, timeoutMs: 30_000 }))).toBe('Echo: still here');
  });

  it('a server that went away fails the call as unavailable; the next call opens a new session', async () => {
    const spec = httpSpec(server.url, { name: 'restarted' });
    expect(textOf(await pool.callTool(spec, 'echo', { message: 'before' }, { scope: S, timeoutMs: 30_000 }))).toBe('Echo: before');
    await server.stop();
    const err = await pool.callTool(spec, 'echo', { message: 'down' }, { scope: S, timeoutMs: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpUnavailableError);
    expect((err as Error).message).toMatch(/^mcp server restarted: /);
    server = await startEverythingHttp(server.port);
    expect(textOf(await pool.callTool(spec, 'echo', { message: 'after' }, { scope: S, timeoutMs: 30_000 }))).toBe('Echo: after');
    expect(pool.stats().find((s) => s.server === 'restarted')).toMatchObject({ connected: true, spawns: 2 });
  });

  it('sends headers with ${VAR} resolved from the worker\'s environment', async () => {
    let seen: string | undefined;
    const probe = http.createServer((req, res) => {
      seen = req.headers.authorization;
      res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/mcp`;
      const err = await pool.listTools(httpSpec(url, { name: 'probe', headers: { Authorization: 'Bearer ${TOKEN}' } }), { scope: S, timeoutMs: 20_000 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McpUnavailableError);
      expect(seen).toBe('Bearer secret-token');
    } finally {
      probe.closeAllConnections();
      await new Promise((resolve) => probe.close(resolve));
    }
  });

  it('a server that is not listening is unavailable', async () => {
    const spec = httpSpec(`http://127.0.0.1:${await freePort()}/mcp`, { name: 'nowhere' });
    const err = await pool.listTools(spec, { scope: S, timeoutMs: 20_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpUnavailableError);
    expect((err as Error).message).toBe('mcp server nowhere: cannot connect: fetch failed (ECONNREFUSED)');
  });
});
