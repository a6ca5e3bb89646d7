/**
 * An MCP server that says its tool list changed after every call, with a list of 1.5 MB
 * (test/support/mcp-relisting-server.cjs): real turns under the default policy, every call
 * approved. The turn re-lists at most once a step, names the set it has by reference, takes in
 * a bounded number of changed lists per run (workflows/turn/mcp.ts), and the session's set is
 * bounded as a whole (activities/mcp/tool-list.ts): the turn finishes, and its history (read
 * from Temporal) grows by a small, fixed amount per call whatever the server sends.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { replayHistory } from '../../history/replay/replay';
import type { TurnResult } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import type { McpToolSet } from '../../deterministic/mcp';
import { MAX_TOOL_SET_CHARS } from '../../activities/mcp/tool-list';
import { MAX_MCP_RELISTS_PER_RUN } from '../../workflows/turn/mcp';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { stdioSpec } from '../support/mcp-servers';
import { toolResults, watchedTurn } from '../support/watched-turn';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

const DONE = 'RELIST_DONE';
const SERVER = path.join(__dirname, '..', 'support', 'mcp-relisting-server.cjs');
const KiB = 1024;
const MB = 1024 * 1024;

/** A turn making `calls` calls of one tool of the server (each approved), then answering; with its history's size. */
async function turn(calls: number, env: Record<string, string> = {}): Promise<{ r: TurnResult; bytes: number; relistings: number; lastListed?: McpToolSet }> {
  const steps = [...Array.from({ length: calls }, (_, i) => ({ tool_calls: [{ name: 'mcp__relist__t0', arguments: { i } }] })), { content: DONE }];
  const sessionId = newSessionId('relist');
  // RELIST_FOR keeps the server's own state apart per session (each session has its process anyway).
  const server = stdioSpec('relist', process.execPath, [SERVER], { env: { ...env, RELIST_FOR: sessionId } });
  const config: SessionConfig = { ...scriptedConfig({ steps }, {}, DEFAULT_POLICY), mcp: { servers: [server] } };
  const r = await watchedTurn(h, sessionId, config, 'go', { approve: true });
  expect([r.terminated_by, r.answer, r.error]).toEqual(['final_answer', DONE, undefined]);
  expect(toolResults(r.messages).map((t) => t.ok)).toEqual(Array(calls).fill(true));
  const handle = h.client.workflow.getHandle(r.turnId);
  const bytes = Number((await handle.describe()).historySize);
  const events = (await handle.fetchHistory()).events ?? [];
  const listings = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'discoverMcpTools');
  // The turn hands its set on by reference: the last list it took in is that listing's result.
  const last = listings.at(-1);
  const done = last && events.find((e) => e.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === last.eventId?.toString());
  const payload = done?.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
  const lastListed = payload ? (JSON.parse(Buffer.from(payload).toString('utf8')) as McpToolSet) : undefined;
  return { r, bytes, relistings: listings.length, ...(lastListed ? { lastListed } : {}) };
}

describe('a server that re-lists a large tool list after every call', () => {
  it('changing it each time: the turn finishes, takes in a bounded number of lists, and each further call adds little to its history', async () => {
    const few = await turn(6);
    const many = await turn(16);
    // The last list taken in is the one after the bounded number of changes (version 1 at session start).
    expect(many.r.mcpTools).toMatchObject({ tools: [], stored: true, ref: many.lastListed?.ref });
    // The turn that handed its changed set on by reference replays against the code.
    const history = await h.client.workflow.getHandle(many.r.turnId).fetchHistory();
    expect(await replayHistory(history, many.r.turnId, inject('workflowBundle'))).toEqual({ ok: true });
    expect(many.lastListed?.tools[0]?.description).toBe(`Tool t0, list version ${1 + MAX_MCP_RELISTS_PER_RUN}.`);
    expect(many.relistings).toBe(MAX_MCP_RELISTS_PER_RUN);
    // The session's set is bounded as a whole: 1.5 MB of tools are not all offered.
    expect(JSON.stringify(many.lastListed?.tools).length).toBeLessThanOrEqual(MAX_TOOL_SET_CHARS);
    // Ten more calls (each asked, approved, run and re-listed): a few KiB each, not the list again.
    expect((many.bytes - few.bytes) / 10).toBeLessThan(64 * KiB);
    expect(many.bytes).toBeLessThan(4 * MB);
  }, 240_000);

  it('without changing it: every call re-lists, and none puts the list in history again', async () => {
    const env = { RELIST_SAME: '1' };
    const few = await turn(4, env);
    const many = await turn(14, env);
    expect(many.relistings).toBe(14);
    // Nothing changed: the turn hands the session no new set.
    expect(many.r.mcpTools).toBeUndefined();
    expect((many.bytes - few.bytes) / 10).toBeLessThan(64 * KiB);
  }, 240_000);
});
