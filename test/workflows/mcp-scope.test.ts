/**
 * MCP server processes and sessions, through whole turns on real Temporal under the default policy
 * (every MCP call asked and approved): a stateful server (a key/value map in memory) runs once per
 * session, so what one session stored another cannot read; a server its owner declares shareable
 * is shared by the sessions of one tenant (the session metadata's) and not across tenants.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveSessionConfig } from '../../config/resolve';
import type { TurnResult } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { removeTempDirs, tempDir, writeScript } from '../support/cli';

let h: TestHarness;
let dir: string;
const KV = path.join(__dirname, '..', 'support', 'mcp-kv-server.cjs');

function config(servers: Record<string, unknown>, steps: unknown[], metadata?: Record<string, string>): SessionConfig {
  const file = path.join(dir, `harness.config.${Math.random().toString(36).slice(2, 8)}.json`);
  writeFileSync(file, JSON.stringify({ mcpServers: servers, limits: { askUserTimeoutSec: 120, approvalTimeoutSec: 120 } }));
  const c = resolveSessionConfig({ config: file, model: `scripted:${writeScript(dir, { steps })}` }, {}, dir);
  h.declareConfig(file);
  return { ...c, ...(metadata ? { metadata } : {}) };
}

const call = (name: string, args: unknown) => ({ tool_calls: [{ name, arguments: args }] });

/** The text the model got back from the turn's one tool call. */
async function toolText(r: TurnResult): Promise<string> {
  const tool = (await h.messages(r)).find((m) => m.role === 'tool') as { content: string };
  return JSON.stringify(JSON.parse(tool.content).result);
}

/** One session storing a value and another reading it back, each a turn of its own. */
async function putThenGet(server: string, decl: Record<string, unknown>, tenants: [string?, string?]): Promise<string> {
  const meta = (t?: string) => (t ? { tenant: t } : undefined);
  const put = config({ [server]: decl }, [call(`mcp__${server}__put`, { key: 'secret', value: 'sesame' }), { content: 'stored' }], meta(tenants[0]));
  const stored = await h.finishApproving(newSessionId(`mcp-${server}-put`), put, 'remember it');
  expect(stored.asked).toHaveLength(1);
  expect(stored.toolCalls[0]).toMatchObject({ ok: true });
  const get = config({ [server]: decl }, [call(`mcp__${server}__get`, { key: 'secret' }), { content: 'read' }], meta(tenants[1]));
  return toolText(await h.finishApproving(newSessionId(`mcp-${server}-get`), get, 'what was it?'));
}

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-mcp-scope-');
});
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('MCP server processes per session', () => {
  it('a stateful server runs once per session: another session cannot read what one stored', async () => {
    expect(await putThenGet('kv', { command: process.execPath, args: [KV] }, [])).toContain('secret is not set');
    expect(h.mcp.stats().filter((s) => s.server === 'kv').map((s) => s.scope.sessionId)).toHaveLength(2);
  }, 180_000);

  it('a shareable server is shared by the sessions of one tenant, not across tenants', async () => {
    const shared = { command: process.execPath, args: [KV], shareable: true };
    expect(await putThenGet('kvshared', shared, ['acme', 'acme'])).toContain('secret=sesame');
    expect(await putThenGet('kvother', shared, ['acme', 'globex'])).toContain('secret is not set');
  }, 180_000);
});
