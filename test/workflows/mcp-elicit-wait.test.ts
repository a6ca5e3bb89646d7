/**
 * An MCP server's question (elicitation) waits for its answer on an update of the turn, not on a
 * query asked every few seconds: real Temporal, server-everything over stdio, the default policy
 * (its tool allowed by the server's decision rule, the question still asked of a person). Also the
 * bad cases: a key the turn never asked is refused, a turn that does not exist cancels the
 * question at once, and a server that dies while its question waits ends the call and the wait.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '@temporalio/activity';
import { durableElicitation } from '../../activities/mcp/elicit';
import { resolveSessionConfig } from '../../config/resolve';
import { answerQuestion, sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { mcpAnswerWaitUpdate } from '../../deterministic/messages';
import type { SessionConfig } from '../../deterministic/session-config';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { removeTempDirs, tempDir, writeScript } from '../support/cli';
import { alive, EVERYTHING, until } from '../support/mcp-servers';

let h: TestHarness;
let dir: string;

function config(steps: unknown[]): SessionConfig {
  const file = path.join(dir, `harness.config.${Math.random().toString(36).slice(2, 8)}.json`);
  const everything = { command: process.execPath, args: [EVERYTHING, 'stdio'], decision: 'allow' };
  writeFileSync(file, JSON.stringify({ mcpServers: { everything }, limits: { askUserTimeoutSec: 120, approvalTimeoutSec: 120 } }));
  const c = resolveSessionConfig({ config: file, model: `scripted:${writeScript(dir, { steps })}` }, {}, dir);
  h.declareConfig(file);
  return c;
}
const ask = { tool_calls: [{ name: 'mcp__everything__trigger-elicitation-request', arguments: {} }] };

/** Starts a turn whose one call asks a question; resolves once the question is pending. */
async function askedTurn(name: string, last: Record<string, unknown>): Promise<{ sessionId: string; turnId: string }> {
  const sessionId = newSessionId(name);
  const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config: config([ask, last]), text: 'ask me' });
  await until(async () => (await sessionState(h.client, sessionId)).status === 'waiting_for_user', 60_000);
  return { sessionId, turnId };
}

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-mcp-elicit-');
});
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('an MCP question waits on an update, not a polled query', () => {
  it('the answer completes the wait: the call goes on with it, and history holds the wait as an update', async () => {
    const { sessionId, turnId } = await askedTurn('mcp-elicit-update', { expect: { last_message_contains: 'Grace Hopper' }, content: 'thanks' });
    const turn = h.client.workflow.getHandle(turnId);
    // A key the turn never asked is refused, before anything reaches history.
    const refused = await turn.executeUpdate(mcpAnswerWaitUpdate, { args: ['t1-s1-c9#e1'] }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'WorkflowUpdateFailedError', cause: { message: expect.stringMatching(/no MCP server question/) } });
    await answerQuestion(h.client, sessionId, JSON.stringify({ name: 'Grace Hopper', check: true }));
    const done = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(done.kind === 'done' && done.result.toolCalls[0]).toMatchObject({ ok: true });
    const events = (await turn.fetchHistory()).events ?? [];
    const waits = events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'mcpAnswerWait');
    expect(waits).toHaveLength(1);
    expect(events.filter((e) => e.workflowExecutionUpdateCompletedEventAttributes)).not.toHaveLength(0);
    // The refused key left no trace.
    expect(JSON.stringify(events.map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta))).not.toContain('c9#e1');
  });

  it('a server that dies while its question waits: the call is unavailable, the question no longer pending, the turn goes on', async () => {
    const { sessionId, turnId } = await askedTurn('mcp-elicit-dies', { expect: { last_message_contains: 'MCP_SERVER_UNAVAILABLE' }, content: 'server gone' });
    const pid = h.mcp.stats().find((s) => s.scope.sessionId === sessionId && s.connected)!.pid!;
    process.kill(pid, 'SIGKILL');
    await until(() => !alive(pid));
    const done = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(done.kind === 'done' && done.result.toolCalls[0]).toMatchObject({ ok: false, error_type: 'MCP_SERVER_UNAVAILABLE' });
    expect((await sessionState(h.client, sessionId)).pending).toBeUndefined();
  });

  it('a question for a turn that does not exist is cancelled at once, not waited on', async () => {
    const ac = new AbortController();
    const warnings: string[] = [];
    const ctx = {
      client: h.client,
      cancellationSignal: ac.signal,
      heartbeat: () => undefined,
      info: { heartbeatTimeoutMs: 0 },
      log: { warn: (m: string) => warnings.push(m) },
    } as unknown as Context;
    const hook = durableElicitation(ctx, { turnId: 's-no-such-session/turn-1', callId: 't1-s1-c0', server: 'everything', timeoutMs: 120_000 });
    expect(await hook({ message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } })).toEqual({ action: 'cancel' });
    expect(warnings.join('\n')).toMatch(/cannot be asked/);
  });
});
