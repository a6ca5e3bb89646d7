/**
 * A session's MCP tool set travels by store reference: the session's history (its discovery, the
 * turns it starts, their results, its carry into continue-as-new) names the list, and each turn
 * reads it back once, so calls are still validated against the server's schemas. Real Temporal,
 * server-everything over stdio, the default policy. Bad inputs: a list missing from the store
 * leaves the turn running without those tools (MCP_SERVER_UNAVAILABLE saying why).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { replayHistory } from '../../history/replay/replay';
import { resolveSessionConfig } from '../../config/resolve';
import { sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import type { SessionConfig } from '../../deterministic/session-config';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { removeTempDirs, tempDir, writeScript } from '../support/cli';
import { EVERYTHING } from '../support/mcp-servers';

let h: TestHarness;
let dir: string;

function config(steps: unknown[]): SessionConfig {
  const file = path.join(dir, `harness.config.${Math.random().toString(36).slice(2, 8)}.json`);
  const everything = { command: process.execPath, args: [EVERYTHING, 'stdio'] };
  writeFileSync(file, JSON.stringify({ mcpServers: { everything }, limits: { askUserTimeoutSec: 120, approvalTimeoutSec: 120 } }));
  const c = resolveSessionConfig({ config: file, model: `scripted:${writeScript(dir, { steps })}` }, {}, dir);
  h.declareConfig(file);
  return c;
}
const call = (name: string, args: unknown) => ({ tool_calls: [{ name, arguments: args }] });
/** Every payload of a history, decoded, one per line (they are base64 text or bytes). */
function text(events: unknown): string {
  const out: string[] = [];
  JSON.stringify(events, (k, v) => {
    if (k === 'data' && (typeof v === 'string' || v instanceof Uint8Array)) out.push(typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : Buffer.from(v).toString('utf8'));
    return v;
  });
  return out.join('\n');
}

/** A workflow's history replayed against the current code. */
async function replays(workflowId: string): Promise<void> {
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  expect(await replayHistory(history, workflowId, inject('workflowBundle'))).toEqual({ ok: true });
}

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-mcp-ref-');
});
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('MCP tool sets by reference', () => {
  it('the session history holds no schema; turns read the list once and still validate and run calls', async () => {
    const sessionId = newSessionId('mcp-by-ref');
    const c = config([
      call('mcp__everything__get-sum', { a: 'one', b: 2 }),
      { expect: { last_message_contains: 'INVALID_ARGUMENTS' }, content: 'bad args' },
      call('mcp__everything__get-sum', { a: 40, b: 2 }),
      { expect: { last_message_contains: '42' }, content: 'sum done' },
    ]);
    const first = await h.finishApproving(sessionId, c, 'add badly');
    expect(first.toolCalls[0]).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
    const second = await h.finishApproving(sessionId, c, 'add');
    expect(second.asked).toEqual(['mcp__everything__get-sum: {"a":40,"b":2}']);
    expect(second.toolCalls[0]).toMatchObject({ ok: true });
    // The session's own history (discovery, the turns' inputs and results) never holds a schema.
    const session = (await h.client.workflow.getHandle(sessionId).fetchHistory()).events!;
    expect(text(session)).not.toContain('inputSchema');
    expect(text(session)).toContain('"stored":true');
    for (const turn of ['turn-1', 'turn-2']) {
      const events = (await h.client.workflow.getHandle(`${sessionId}/${turn}`).fetchHistory()).events!;
      const started = events[0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
      const input = JSON.parse(Buffer.from(started.data!).toString('utf8')) as TurnInput;
      expect(input.mcpTools).toMatchObject({ tools: [], stored: true });
      expect(events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'loadMcpTools')).toHaveLength(1);
    }
    // Histories recorded this way replay against the code.
    for (const id of [sessionId, `${sessionId}/turn-1`, `${sessionId}/turn-2`]) await replays(id);
  }, 180_000);

  it('a session that continues as new carries the set by reference into its next run, whose turns still use it', async () => {
    const sessionId = newSessionId('mcp-by-ref-can');
    const base = config([call('mcp__everything__get-sum', { a: 1, b: 2 }), { content: 'one' }, call('mcp__everything__get-sum', { a: 40, b: 2 }), { expect: { last_message_contains: '42' }, content: 'two' }]);
    // A session history this short continues as new after each turn.
    const c = { ...base, limits: { ...base.limits, continueAsNewAfterEvents: 10 } };
    await h.finishApproving(sessionId, c, 'first');
    const second = await h.finishApproving(sessionId, c, 'second');
    expect(second.toolCalls[0]).toMatchObject({ ok: true });
    const session = h.client.workflow.getHandle(sessionId);
    const runs: string[] = [];
    for await (const w of h.client.workflow.list({ query: `WorkflowId = '${sessionId}'` })) runs.push(w.runId);
    expect(runs.length).toBeGreaterThan(1);
    const started = (await session.fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!;
    const carried = text([started]);
    expect(carried).toContain('"stored":true');
    expect(carried).not.toContain('inputSchema');
  }, 180_000);

  it('a list missing from the store: the turn goes on, its MCP tools unavailable saying why', async () => {
    const sessionId = newSessionId('mcp-by-ref-missing');
    const c = config([call('mcp__everything__echo', { message: 'x' }), { content: 'no tools' }]);
    const { turnId } = await sendMessage(h.client, {
      taskQueue: h.taskQueue,
      sessionId,
      config: c,
      text: 'go',
    });
    await waitForTurn(h.client, turnId, { pollMs: 100 });
    // A turn started by hand with a set whose list the store never held.
    const input = JSON.parse(
      Buffer.from((await h.client.workflow.getHandle(turnId).fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!.data!).toString('utf8'),
    ) as TurnInput;
    const forged: TurnInput = { ...input, turnId: `${sessionId}/turn-9`, turn: 9, mcpTools: { ...input.mcpTools!, ref: 'f'.repeat(64) } };
    const handle = await h.client.workflow.start('turnWorkflow', { taskQueue: h.taskQueue, workflowId: forged.turnId, args: [forged] });
    const r = (await handle.result()) as TurnResult;
    expect(r.terminated_by, JSON.stringify(r).slice(0, 600)).toBe('final_answer');
    expect(r.toolCalls[0]).toMatchObject({ ok: false, error_type: 'MCP_SERVER_UNAVAILABLE' });
    const tool = (await h.messages(r)).find((m) => m.role === 'tool') as { content: string };
    expect(tool.content).toContain('could not be read from the store');
  });
});
