/**
 * An MCP server's question (elicitation) waits for its answer on an update of the turn, not on a
 * query asked every few seconds: real Temporal, server-everything over stdio, the default policy
 * (its tool allowed by the server's decision rule, the question still asked of a person; or asked
 * and approved from another process, then answered from there). Nobody answering within
 * askUserTimeoutSec cancels the question. Also the bad cases: a key the turn never asked is refused, a turn that does not exist cancels the
 * question at once, and a server that dies while its question waits ends the call and the wait.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { replayHistory } from '../../history/replay/replay';
import type { Context } from '@temporalio/activity';
import { durableElicitation } from '../../activities/mcp/elicit';
import { resolveSessionConfig } from '../../config/resolve';
import { answerQuestion, sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { mcpAnswerWaitUpdate } from '../../deterministic/messages';
import type { SessionConfig } from '../../deterministic/session-config';
import type { TurnResult } from '../../deterministic/session';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, tempDir, writeScript } from '../support/cli';
import { alive, EVERYTHING, until } from '../support/mcp-servers';

let h: TestHarness;
let dir: string;

const everything = { command: process.execPath, args: [EVERYTHING, 'stdio'] };
const call = (name: string, args: unknown) => ({ tool_calls: [{ name, arguments: args }] });
const ask = call('mcp__everything__trigger-elicitation-request', {});

/** A session config resolved from a config file with these servers (its tools allowed unless given), as users write it. */
function config(steps: unknown[], servers: Record<string, unknown> = { everything: { ...everything, decision: 'allow' } }, extra: Record<string, unknown> = {}): SessionConfig {
  const file = path.join(dir, `harness.config.${Math.random().toString(36).slice(2, 8)}.json`);
  writeFileSync(file, JSON.stringify({ mcpServers: servers, limits: { askUserTimeoutSec: 120, approvalTimeoutSec: 120 }, ...extra }));
  const c = resolveSessionConfig({ config: file, model: `scripted:${writeScript(dir, { steps })}` }, {}, dir);
  h.declareConfig(file);
  return c;
}

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
    // And the turn's history, with the wait in it, replays against the code.
    expect(await replayHistory(await turn.fetchHistory(), turnId, inject('workflowBundle'))).toEqual({ ok: true });
  }, 180_000);

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

  it('a server question nobody answers within askUserTimeoutSec is cancelled and no longer pending', async () => {
    const sessionId = newSessionId('mcp-elicit-timeout');
    const c = config([call('mcp__quiet__trigger-elicitation-request', {}), { expect: { last_message_contains: 'cancel' }, content: 'nobody answered' }], { quiet: { ...everything, decision: 'allow' } }, {
      limits: { askUserTimeoutSec: 3, approvalTimeoutSec: 120 },
    });
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config: c, text: 'ask me' });
    await until(async () => (await sessionState(h.client, sessionId)).status === 'waiting_for_user', 30_000);
    const r = await h.client.workflow.getHandle<(i: unknown) => Promise<TurnResult>>(turnId).result();
    expect(r.terminated_by).toBe('final_answer');
    expect((await sessionState(h.client, sessionId)).pending).toBeUndefined();
  });

  it('under the default policy a server question follows the approval: both from other processes (`harness approve`, `harness answer`)', async () => {
    const sessionId = newSessionId('mcp-elicit');
    const c = config([ask, { expect: { last_message_contains: 'Ada Lovelace' }, content: 'thanks' }], { everything });
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config: c, text: 'ask me' });
    const env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'cli-home') });
    await until(async () => (await sessionState(h.client, sessionId)).status === 'waiting_for_approval', 60_000);
    // This CLI user was shown nothing: the approval names its call.
    const approved = await runCli(['approve', sessionId, 't1-s1-c0', '--no-wait'], { env, cwd: dir, timeoutMs: 60_000 });
    expect(approved.code, describeResult(approved)).toBe(0);
    await until(async () => (await sessionState(h.client, sessionId)).status === 'waiting_for_user', 60_000);
    const state = await sessionState(h.client, sessionId);
    expect(state.pending).toMatchObject({ kind: 'question', question: expect.stringContaining('MCP server everything') });
    const bad = await runCli(['answer', sessionId, 'just text', '--no-wait'], { env, cwd: dir, timeoutMs: 60_000 });
    expect(bad.code, describeResult(bad)).not.toBe(0);
    const answer = JSON.stringify({ name: 'Ada Lovelace', check: true, email: 'ada@example.org' });
    const r = await runCli(['answer', sessionId, answer, '--json'], { env, cwd: dir, timeoutMs: 60_000 });
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r)).toMatchObject({ terminated_by: 'final_answer', answer: 'thanks' });
    const done = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(done.kind === 'done' && done.result.toolCalls[0]).toMatchObject({ ok: true });
  });
});
