/**
 * The `mcpServers` section: validation that names server and field, `${VAR}` references kept for
 * the worker, per-server and per-tool decisions (a tool's own setting wins in both directions),
 * and annotations that never grant anything.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveSessionConfig } from '../../config/resolve';
import { declaredByConfig } from '../../config/declarations';
import { UsageError } from '../../machine/errors';
import { decide } from '../../deterministic/policy';
import { mcpRules, mcpToolDefinitions } from '../../deterministic/mcp-tools';
import type { McpToolInfo, McpToolSet } from '../../deterministic/mcp';
import { removeTempDirs, tempDir } from '../support/cli';

const dir = tempDir('harness-mcp-config-');
afterAll(() => removeTempDirs());

function resolve(mcpServers: unknown, extra: Record<string, unknown> = {}) {
  const file = path.join(dir, `c${Math.random().toString(36).slice(2, 8)}.json`);
  writeFileSync(file, JSON.stringify({ model: 'gpt-4o-mini', mcpServers, ...extra }));
  return resolveSessionConfig({ config: file }, {}, dir);
}

function error(mcpServers: unknown): string {
  try {
    resolve(mcpServers);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error('expected a UsageError');
}

describe('mcpServers validation', () => {
  it.each([
    [{ fs: { command: '' } }, 'mcpServers.fs.command'],
    [{ fs: { command: 'x', args: 'not-an-array' } }, 'mcpServers.fs.args'],
    [{ web: { url: 'ftp://example.org' } }, 'mcpServers.web.url'],
    [{ web: { url: 'http://x', headers: { Authorization: 7 } } }, 'mcpServers.web.headers.Authorization'],
    [{ both: { command: 'x', url: 'http://x' } }, 'mcpServers.both'],
    [{ none: {} }, 'mcpServers.none'],
    [{ 'a__b': { command: 'x' } }, 'mcpServers.a__b'],
    [{ fs: { command: 'x', risk: 'harmless' } }, 'mcpServers.fs.risk'],
    [{ fs: { command: 'x', tools: { read: { decision: 'maybe' } } } }, 'mcpServers.fs.tools.read.decision'],
    [{ fs: { command: 'x', typo: true } }, 'mcpServers.fs'],
  ])('%j is refused naming %s', (servers, field) => {
    expect(error(servers)).toContain(`${field}:`);
  });

  const servers = {
    gh: { url: 'https://mcp.example.org/mcp', headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' } },
    local: { command: './server.sh', args: ['--x'], env: { TOKEN: '${MY_TOKEN}' }, cwd: 'sub', callTimeoutSec: 5 },
    off: { command: 'x', enabled: false },
  };

  it('gives the worker the servers to declare, ${VAR} references kept as written (the worker resolves them), with defaults', () => {
    const file = path.join(dir, 'declared.json');
    writeFileSync(file, JSON.stringify({ mcpServers: servers }));
    expect(declaredByConfig(file, {}, dir).mcpServers).toEqual([
      { name: 'gh', transport: 'http', url: 'https://mcp.example.org/mcp', headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' }, startupTimeoutMs: 10_000, callTimeoutMs: 60_000 },
      { name: 'local', transport: 'stdio', command: path.join(dir, 'server.sh'), args: ['--x'], env: { TOKEN: '${MY_TOKEN}' }, cwd: path.join(dir, 'sub'), startupTimeoutMs: 10_000, callTimeoutMs: 5_000 },
    ]);
  });

  it('gives a server launched by a package runner (npx, npm exec, docker run …) a longer startup, unless it sets its own', () => {
    const startup = (entry: Record<string, unknown>) => resolve({ s: entry }).mcp?.servers[0]?.startupTimeoutMs;
    expect(startup({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv'] })).toBe(120_000);
    expect(startup({ command: '/usr/local/bin/npx', args: ['pkg'] })).toBe(120_000);
    expect(startup({ command: 'npm', args: ['exec', 'pkg'] })).toBe(120_000);
    expect(startup({ command: 'uvx', args: ['mcp-server-git'] })).toBe(120_000);
    expect(startup({ command: 'docker', args: ['run', '-i', 'img'] })).toBe(120_000);
    expect(startup({ command: 'npm', args: ['start'] })).toBe(10_000);
    expect(startup({ command: 'node', args: ['server.js'] })).toBe(10_000);
    expect(startup({ command: 'npx', args: ['pkg'], startupTimeoutSec: 5 })).toBe(5_000);
    expect(startup({ url: 'https://mcp.example.org/mcp' })).toBe(10_000);
  });

  it('gives a session only the names of the servers and how their tools are judged, never what runs', () => {
    const c = resolve(servers);
    expect(c.mcp?.servers).toEqual([
      { name: 'gh', startupTimeoutMs: 10_000, callTimeoutMs: 60_000 },
      { name: 'local', startupTimeoutMs: 10_000, callTimeoutMs: 5_000 },
    ]);
    expect(JSON.stringify(c)).not.toMatch(/server\.sh|GITHUB_TOKEN|mcp\.example\.org/);
  });
});

describe('decisions for MCP tools', () => {
  const tool = (server: string, name: string, annotations?: McpToolInfo['annotations']): McpToolInfo => ({
    server,
    tool: name,
    name: `mcp__${server}__${name}`,
    description: `the ${name} tool`,
    inputSchema: { type: 'object', properties: {} },
    ...(annotations ? { annotations } : {}),
  });
  const set: McpToolSet = {
    servers: [],
    tools: [tool('fs', 'read', { readOnlyHint: true }), tool('fs', 'write'), tool('fs', 'wipe'), tool('web', 'fetch', { readOnlyHint: true, idempotentHint: true }), tool('web', 'post')],
  };
  const c = resolve({
    fs: { command: 'x', decision: 'allow', tools: { write: { decision: 'ask' }, wipe: { decision: 'deny', risk: 'dangerous' } } },
    web: { url: 'http://x', decision: 'deny', tools: { fetch: { decision: 'allow', risk: 'network' } } },
  });
  const defs = new Map(mcpToolDefinitions(set, c.mcp!.servers).map((d) => [d.name, d]));
  const rules = mcpRules(set, c.mcp!.servers);
  const decision = (name: string) => decide(c.policy!, { tool: name, risk: defs.get(name)!.risk, args: {} }, rules);

  it('a tool setting overrides its server in both directions', () => {
    expect(decision('mcp__fs__read')).toMatchObject({ decision: 'allow', rule: 'mcp:fs' });
    expect(decision('mcp__fs__write')).toMatchObject({ decision: 'ask', rule: 'mcp:fs:write' });
    expect(decision('mcp__fs__wipe')).toMatchObject({ decision: 'deny', rule: 'mcp:fs:wipe' });
    expect(decision('mcp__web__fetch')).toMatchObject({ decision: 'allow', rule: 'mcp:web:fetch' });
    expect(decision('mcp__web__post')).toMatchObject({ decision: 'deny', rule: 'mcp:web' });
  });

  it('MCP path arguments are the server\'s, not the workspace: outsideWorkspace rules do not hold for them', () => {
    const args = { path: '/srv/docs/report.md' };
    expect(decision('mcp__fs__read')).toMatchObject({ decision: 'allow' });
    expect(decide(c.policy!, { tool: 'mcp__fs__read', risk: 'write', args }, rules)).toMatchObject({ decision: 'allow', rule: 'mcp:fs' });
    expect(decide(c.policy!, { tool: 'read_file', risk: 'read_only', args })).toMatchObject({ decision: 'deny', rule: 'deny-outside-workspace' });
  });

  it('risk comes from the entry; annotations never make a tool read-only (so never allowed by the read-only default rule)', () => {
    expect(defs.get('mcp__fs__wipe')!.risk).toBe('dangerous');
    expect(defs.get('mcp__web__fetch')!.risk).toBe('network');
    const bare = resolve({ s: { command: 'x' } });
    const hinted = mcpToolDefinitions({ servers: [], tools: [tool('s', 'look', { readOnlyHint: true })] }, bare.mcp!.servers)[0]!;
    expect(hinted.risk).toBe('write');
    expect(decide(bare.policy!, { tool: hinted.name, risk: hinted.risk, args: {} }, mcpRules({ servers: [], tools: [] }, bare.mcp!.servers))).toMatchObject({ decision: 'ask' });
  });
});
