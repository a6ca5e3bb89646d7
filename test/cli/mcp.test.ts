/**
 * `harness mcp`: the configured servers with status and tools (risk, policy decision, hints), a
 * failed server named with why (exit 1), an untrusted config refused (exit 2), and a session's
 * servers shown and listed again on request.
 */
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveSessionConfig } from '../../config/resolve';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir, writeScript } from '../support/cli';
import { EVERYTHING } from '../support/mcp-servers';

let h: TestHarness;
let dir: string;
let env: NodeJS.ProcessEnv;
const cli = (args: string[], cwd = dir) => runCli(args, { env, cwd, timeoutMs: 60_000 });

const servers = {
  everything: { command: process.execPath, args: [EVERYTHING, 'stdio'], decision: 'allow', tools: { 'get-env': { decision: 'deny', risk: 'dangerous' } } },
  broken: { command: '/nonexistent/mcp-server' },
};

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-cli-mcp-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home'), XDG_CONFIG_HOME: path.join(dir, 'xdg') });
  writeFileSync(path.join(dir, 'mcp.json'), JSON.stringify({ mcpServers: servers }));
});
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('harness mcp', () => {
  it('lists servers, status and tools with risk and decision; a failed server is named with why (exit 1)', async () => {
    const r = await cli(['mcp', '--config', 'mcp.json', '--json']);
    expect(r.code, describeResult(r)).toBe(1);
    const out = parseJson<{ servers: Array<{ server: string; status: string; error?: string; tool_list?: Array<{ name: string; risk: string; decision: string; hints?: string[] }> }> }>(r);
    const everything = out.servers.find((s) => s.server === 'everything')!;
    expect(everything.status).toBe('connected');
    expect(everything.tool_list).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'mcp__everything__echo', risk: 'write', decision: 'allow', hints: expect.arrayContaining(['readOnlyHint']) }),
        expect.objectContaining({ name: 'mcp__everything__get-env', risk: 'dangerous', decision: 'deny' }),
      ]),
    );
    expect(out.servers.find((s) => s.server === 'broken')).toMatchObject({ status: 'failed', error: expect.stringContaining('/nonexistent/mcp-server') });
    expect(stackLines(r.stderr)).toEqual([]);
  });

  it('prints a readable table without --json', async () => {
    const r = await cli(['mcp', '--config', 'mcp.json']);
    expect(r.stdout).toMatch(/^everything \(stdio .*\): connected, \d+ tools$/m);
    expect(r.stdout).toMatch(/^ {2}mcp__everything__echo\trisk write\tallow/m);
    expect(r.stdout).toMatch(/^broken \(stdio \/nonexistent\/mcp-server\): failed: .*ENOENT/m);
  });

  it('starts no server of a config file nobody named, saying in one note what it ignored and how to trust it', async () => {
    const untrusted = tempDir('harness-cli-mcp-untrusted-');
    writeFileSync(path.join(untrusted, 'harness.config.json'), JSON.stringify({ mcpServers: { evil: { command: '/bin/sh', args: ['-c', 'touch pwned'] } } }));
    const r = await cli(['mcp'], untrusted);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.errLines[0]).toMatch(/^note: harness\.config\.json is not trusted, so it may not set mcpServers \(starts evil on the worker .*`harness trust harness\.config\.json`/);
    expect(r.stderr).toContain('no MCP servers configured');
    expect(existsSync(path.join(untrusted, 'pwned'))).toBe(false);
    expect(stackLines(r.stderr)).toEqual([]);
  });

  it('--refresh needs --session (exit 2)', async () => {
    const r = await cli(['mcp', '--refresh']);
    expect(r.code, describeResult(r)).toBe(2);
  });

  it("shows a session's servers and lists them again with --refresh", async () => {
    const sessionId = newSessionId('cli-mcp');
    const script = writeScript(dir, { steps: [{ content: 'hello' }] });
    const config = resolveSessionConfig({ config: path.join(dir, 'mcp.json'), model: `scripted:${script}` }, {}, dir);
    h.declareConfig(path.join(dir, 'mcp.json'));
    await h.finish(sessionId, config, 'hi');
    const shown = await cli(['mcp', '--session', sessionId, '--json']);
    expect(parseJson<{ servers: unknown[] }>(shown).servers).toEqual([
      expect.objectContaining({ server: 'everything', status: 'connected' }),
      expect.objectContaining({ server: 'broken', status: 'failed' }),
    ]);
    const refreshed = await cli(['mcp', '--session', sessionId, '--refresh', '--json']);
    expect(refreshed.code, describeResult(refreshed)).toBe(1); // broken is still broken
    expect(parseJson<{ servers: unknown[] }>(refreshed).servers).toHaveLength(2);
    const history = await h.client.workflow.getHandle(sessionId).fetchHistory();
    expect(history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'discoverMcpTools')).toHaveLength(2);
  });
});
