import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpPool } from '../../../activities/mcp/pool';
import { mcpResultToToolResult } from '../../../activities/mcp/results';
import { FILESYSTEM, everythingStdio, stdioSpec, textOf } from '../../support/mcp-servers';

/** The session the pool's connections serve here. */
const S = { sessionId: 's-pool-test' };

describe('McpPool with server-everything over stdio', () => {
  const pool = new McpPool({ env: {} });
  const spec = everythingStdio();
  afterAll(() => pool.closeAll());

  it('lists the tools with qualified names, schemas and annotations', async () => {
    const { tools, skipped } = await pool.listTools(spec, { scope: S, timeoutMs: 30_000 });
    expect(skipped).toEqual(['simulate-research-query: runs only as a task (not supported)']);
    const byTool = new Map(tools.map((t) => [t.tool, t]));
    expect(byTool.get('echo')).toMatchObject({ server: 'everything', name: 'mcp__everything__echo', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } });
    expect(byTool.get('get-sum')).toMatchObject({ name: 'mcp__everything__get-sum', annotations: { readOnlyHint: true, destructiveHint: false } });
    expect(byTool.get('get-sum')!.description).toMatch(/sum/i);
    // Registered once the server knows the client can answer: present in the first discovery.
    expect(byTool.has('trigger-elicitation-request')).toBe(true);
    // The server announces those tools while it starts; the discovery already holds them.
    expect(pool.takeListChanged(spec, S)).toBe(false);
  });

  it('echoes and sums', async () => {
    const echo = await pool.callTool(spec, 'echo', { message: 'hello pool' }, { scope: S, timeoutMs: 30_000 });
    expect(mcpResultToToolResult('everything', 'echo', echo)).toEqual({ ok: true, result: { content: 'Echo: hello pool' } });
    const sum = await pool.callTool(spec, 'get-sum', { a: 2, b: 40 }, { scope: S, timeoutMs: 30_000 });
    expect(textOf(sum)).toContain('42');
  });

  it('summarises an image instead of carrying its data', async () => {
    const r = mcpResultToToolResult('everything', 'get-tiny-image', await pool.callTool(spec, 'get-tiny-image', {}, { scope: S, timeoutMs: 30_000 }));
    expect(r.ok).toBe(true);
    const out = r.result as { content: string; media: Array<{ type: string; mimeType: string; bytes: number }> };
    expect(out.media).toEqual([{ type: 'image', mimeType: 'image/png', bytes: expect.any(Number) }]);
    expect(out.media[0]!.bytes).toBeGreaterThan(0);
    expect(JSON.stringify(r).length).toBeLessThan(1000);
    expect(JSON.stringify(r)).not.toMatch(/iVBOR/); // a PNG's base64 start
  });

  it('keeps structured content', async () => {
    const r = mcpResultToToolResult('everything', 'get-structured-content', await pool.callTool(spec, 'get-structured-content', { location: 'Chicago' }, { scope: S, timeoutMs: 30_000 }));
    expect(r).toMatchObject({ ok: true, result: { structured: { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 } } });
  });

  it('lists resource links', async () => {
    const r = mcpResultToToolResult('everything', 'get-resource-links', await pool.callTool(spec, 'get-resource-links', { count: 2 }, { scope: S, timeoutMs: 30_000 }));
    const out = r.result as { content: string; resources: Array<{ uri: string; name: string; mimeType: string }> };
    expect(out.content).toContain('2 resource links');
    expect(out.resources).toHaveLength(2);
    expect(out.resources[0]).toMatchObject({ uri: expect.stringContaining('://'), name: 'Blob Resource 1' });
    expect(out.resources[1]).toMatchObject({ name: 'Text Resource 2', mimeType: 'text/plain' });
  });

  it('keeps an embedded text resource', async () => {
    const r = mcpResultToToolResult('everything', 'get-resource-reference', await pool.callTool(spec, 'get-resource-reference', { resourceType: 'Text', resourceId: 2 }, { scope: S, timeoutMs: 30_000 }));
    expect(r.ok).toBe(true);
    const out = r.result as { resources: Array<{ uri: string; text?: string }> };
    expect(out.resources.some((x) => typeof x.text === 'string' && x.text.length > 0)).toBe(true);
  });

  it('reports wrong arguments as MCP_TOOL_ERROR in the server\'s words', async () => {
    const raw = await pool.callTool(spec, 'get-sum', { a: 'two', b: 3 }, { scope: S, timeoutMs: 30_000 });
    expect(raw.isError).toBe(true);
    const r = mcpResultToToolResult('everything', 'get-sum', raw);
    expect(r).toMatchObject({ ok: false, error_type: 'MCP_TOOL_ERROR', recoverable: true, suggestion: expect.stringContaining('fix the arguments') });
    expect(r.message).toMatch(/a/);
    expect(r.message!.length).toBeLessThanOrEqual(2100);
  });

  it('reports an unknown tool as MCP_TOOL_ERROR, not as an unavailable server', async () => {
    const r = mcpResultToToolResult('everything', 'no-such-tool', await pool.callTool(spec, 'no-such-tool', {}, { scope: S, timeoutMs: 30_000 }));
    expect(r).toMatchObject({ ok: false, error_type: 'MCP_TOOL_ERROR' });
    expect(r.message).toMatch(/no-such-tool/);
    expect(pool.stats()[0]).toMatchObject({ connected: true, spawns: 1 });
  });
});

describe('McpPool with server-filesystem over stdio', () => {
  let dir: string;
  const pool = new McpPool({ env: {} });
  beforeAll(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-fs-')));
  });
  afterAll(async () => {
    await pool.closeAll();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes a file and reads it back', async () => {
    const spec = stdioSpec('fs', process.execPath, [FILESYSTEM, dir]);
    const { tools } = await pool.listTools(spec, { scope: S, timeoutMs: 30_000 });
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['mcp__fs__write_file', 'mcp__fs__read_text_file', 'mcp__fs__list_directory']));
    const file = path.join(dir, 'note.txt');
    const w = mcpResultToToolResult('fs', 'write_file', await pool.callTool(spec, 'write_file', { path: file, content: 'written over mcp\n' }, { scope: S, timeoutMs: 30_000 }));
    expect(w.ok).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe('written over mcp\n');
    const r = mcpResultToToolResult('fs', 'read_text_file', await pool.callTool(spec, 'read_text_file', { path: file }, { scope: S, timeoutMs: 30_000 }));
    expect(r).toMatchObject({ ok: true, result: { content: expect.stringContaining('written over mcp') } });
    const outside = mcpResultToToolResult('fs', 'read_text_file', await pool.callTool(spec, 'read_text_file', { path: '/etc/passwd' }, { scope: S, timeoutMs: 30_000 }));
    expect(outside).toMatchObject({ ok: false, error_type: 'MCP_TOOL_ERROR' });
  });
});
