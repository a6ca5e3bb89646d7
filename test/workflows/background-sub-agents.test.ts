/**
 * Background sub-agents through real Temporal, under the default policy: a sub-agent listed
 * `{ agent, background: true }` is started and the parent goes on (the call's result says so, with
 * the child's turn id); the parent turn ends before the child; the child's waits surface at the
 * session with its path and are decided there; its end reaches the session as a message (a new
 * turn when idle, the next step of a running turn), sent by the child as the trace shows; its
 * spend is in the session's cost; its end signalled again is not taken again. Bounded: a session's running ones by limits.maxBackgroundAgents;
 * a forged one starts nothing; the session's end cancels those still running. Each history replays.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { defineAgent } from '../../index';
import { HarnessClient } from '../../api/client';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import type { SessionState } from '../../deterministic/session-state';
import { replayHistory } from '../../history/replay/replay';
import { loadTrace } from '../../history/trace';
import { loadLedger } from '../../history/ledger/load';
import { decodePayload } from '../../history/trace/events';
import { ALLOW_ALL, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { factTools } from '../support/fact-tools';
import { scriptFiles } from '../support/agent-scripts';
import { taskFailures, toolResults } from '../support/watched-turn';
import { pendingApprovals } from '../../client/session-status';
import { TroubleWait } from '../../client/trouble-wait';

// file_note's runs are 'file_note <note>' (test/support/fact-tools.ts).
const { runs: filed, file } = factTools();

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-background-'));
let h: TestHarness;
let client: HarnessClient;

const scriptFile = scriptFiles(dir);

beforeAll(async () => {
  h = await startHarness({ tools: [file] });
  client = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {}, cwd: dir });
});
afterAll(async () => {
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function replays(workflowId: string): Promise<void> {
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  expect(await replayHistory(history, workflowId, inject('workflowBundle'))).toEqual({ ok: true });
}

const state = (sessionId: string) => h.client.workflow.getHandle(sessionId).query<SessionState>('state');
const started = (r: TurnResult) => toolResults(r.messages ?? [])[0] as { ok: true; result: { background: boolean; turnId: string; agent: string } };

describe('background sub-agents', () => {
  it("outlive the parent turn; their approval is decided at the session; their answer is the session's next turn; their spend is the session's", async () => {
    filed.length = 0;
    const clerk = defineAgent({
      name: 'bg-clerk',
      instructions: 'You file notes.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'file_note', arguments: { note: 'b-1' } }] }, { content: 'Filed b-1.' }] }),
      tools: [file],
    });
    const lead = defineAgent({
      name: 'bg-lead',
      instructions: 'You delegate.',
      model: scriptFile({
        steps: [
          { expect: { tools_include: 'agent__bg-clerk' }, tool_calls: [{ name: 'agent__bg-clerk', arguments: { task: 'File b-1.' } }] },
          { expect: { last_message_contains: 'started in the background' }, content: 'Started it.' },
          { expect: { last_message_contains: 'Filed b-1.' }, content: 'The clerk filed b-1.' },
          { expect: { last_message_contains: 'Anything else?' }, content: 'No.' },
        ],
      }),
      agents: [{ agent: clerk, background: true }],
    });
    h.declarations.add({ agents: [lead.spec, clerk.spec] });
    const out = await client.run('File it.', { agent: 'bg-lead' });
    expect(out.kind).toBe('done');
    const r = await h.complete(out.result!);
    expect(r.answer).toBe('Started it.');
    const call = started(r);
    const childId = `${out.turnId}/agent-${r.toolCalls[0]!.callId}`;
    expect(call).toMatchObject({ ok: true, result: { agent: 'bg-clerk', background: true, turnId: childId } });
    // The parent turn has ended; its child runs on, waiting for its approval at the session.
    expect((await h.client.workflow.getHandle(childId).describe()).status.name).toBe('RUNNING');
    await expect.poll(async () => (await state(out.sessionId)).status, { timeout: 30_000, interval: 100 }).toBe('waiting_for_approval');
    const s = await state(out.sessionId);
    expect(s.currentTurnId).toBeUndefined();
    expect(s.pending).toMatchObject({ kind: 'approvals', agent: { turnId: childId, path: ['bg-lead', 'bg-clerk'], background: true } });
    const pending = (await client.pending({ taskQueue: h.taskQueue })).filter((p) => p.sessionId === out.sessionId);
    expect(pending).toMatchObject([{ kind: 'approval', tool: 'file_note', agentPath: ['bg-lead', 'bg-clerk'], agentTurnId: childId }]);
    expect(filed).toEqual([]);
    // What `harness approve <session>` shows and decides: the child's calls, asked of the child's turn.
    const shown = await pendingApprovals(h.client, out.sessionId, new TroubleWait({ deadline: Date.now() + 30_000 }));
    expect([shown.turnId, shown.calls.map((c) => c.tool)]).toEqual([childId, ['file_note']]);
    await client.approve(out.sessionId);
    // Its answer starts the session's second turn, sent by the child.
    const turn2 = `${out.sessionId}/turn-2`;
    await expect.poll(async () => (await state(out.sessionId)).turnCount, { timeout: 60_000, interval: 200 }).toBe(2);
    const second = await h.complete((await h.client.workflow.getHandle(turn2).result()) as TurnResult);
    expect(second.answer).toBe('The clerk filed b-1.');
    expect(filed).toEqual(['file_note b-1']);
    const input = decodePayload((await h.client.workflow.getHandle(turn2).fetchHistory()).events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]) as TurnInput;
    expect(input.userMessage).toMatch(/^\[background sub-agent bg-lead › bg-clerk \(turn .+\), answering call \S+ of .+\/turn-1\] answered:\nFiled b-1\.$/);
    expect(input.from).toMatchObject({ turnId: childId, agent: 'bg-clerk', callId: r.toolCalls[0]!.callId, parentTurnId: out.turnId });
    const trace = await loadTrace(h.client, out.sessionId);
    const span = trace.spans.find((x) => x.span.type === 'turn' && x.span.name === turn2)!.span;
    expect(span.input).toMatchObject({ sent_by: `background sub-agent bg-lead › bg-clerk (${childId})` });
    // The child's turn is nested under the call that started it, as any sub-agent's.
    const callSpan = trace.spans.find((x) => x.span.type === 'tool_call' && x.span.name === 'agent__bg-clerk')!.span;
    expect(trace.spans.find((x) => x.span.type === 'turn' && x.span.name === childId)?.span.parent_id).toBe(callSpan.span_id);
    // The child's spend is the session's: in its state and in `harness cost`.
    const child = (await h.client.workflow.getHandle(childId).result()) as TurnResult;
    const after = await state(out.sessionId);
    expect(after.status).toBe('idle');
    expect(after.usage.total_tokens).toBe(r.usage.total_tokens + second.usage.total_tokens + child.usage.total_tokens);
    const ledger = await loadLedger(h.client, out.sessionId);
    expect(ledger.byKind.model.calls).toBe(2 + 1 + 2);
    expect(ledger.total.total_tokens).toBe(after.usage.total_tokens);
    expect([...(await taskFailures(h.client, out.turnId)), ...(await taskFailures(h.client, childId)), ...(await taskFailures(h.client, turn2))]).toEqual([]);
    // The same end signalled again is not taken again: the next message is turn 3.
    const sessionHistory = await h.client.workflow.getHandle(out.sessionId).fetchHistory();
    const end = sessionHistory.events!.find((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'backgroundResult')!;
    await h.client.workflow.getHandle(out.sessionId).signal('backgroundResult', decodePayload(end.workflowExecutionSignaledEventAttributes!.input!.payloads![0]));
    const third = await client.run('Anything else?', { sessionId: out.sessionId });
    expect([third.turnId, third.kind === 'done' && third.result.answer]).toEqual([`${out.sessionId}/turn-3`, 'No.']);
    expect((await state(out.sessionId)).turnCount).toBe(3);
    await client.end(out.sessionId);
    for (const id of [out.turnId, childId, turn2, out.sessionId]) await replays(id);
  }, 120_000);

  it("reach a running turn at its next step; a session has at most limits.maxBackgroundAgents running; ending it cancels those", async () => {
    filed.length = 0;
    const quick = defineAgent({ name: 'bg-quick', instructions: 'You answer.', model: scriptFile({ steps: [{ content: 'Quick answer.' }] }) });
    const slow = defineAgent({
      name: 'bg-slow',
      instructions: 'You file.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'file_note', arguments: { note: 'never' } }] }, { content: 'unreached' }] }),
      tools: [file],
    });
    const lead = defineAgent({
      name: 'bg-lead2',
      instructions: 'You delegate.',
      model: scriptFile({
        steps: [
          { tool_calls: [{ name: 'agent__bg-quick', arguments: { task: 'Answer.' } }] },
          { tool_calls: [{ name: 'file_note', arguments: { note: 'mine' } }] },
          { expect: { messages_contain: 'Quick answer.' }, tool_calls: [{ name: 'agent__bg-slow', arguments: { task: 'File.' } }, { name: 'agent__bg-quick', arguments: { task: 'Again.' } }] },
          { expect: { last_message_contains: 'SUB_AGENT_LIMIT' }, content: 'One runs.' },
        ],
      }),
      tools: [file],
      agents: [{ agent: quick, background: true }, { agent: 'bg-slow', background: true }],
      limits: { maxBackgroundAgents: 1 },
    });
    h.declarations.add({ agents: [lead.spec, quick.spec, slow.spec] });
    const sent = await client.send('Go.', { agent: 'bg-lead2' });
    // The lead waits for its own approval while the quick child ends: its answer waits for the next step.
    const waiting = await client.wait(sent.turnId, { timeoutMs: 60_000 });
    expect(waiting.kind).toBe('waiting');
    const quickId = `${sent.turnId}/agent-t1-s1-c0`;
    expect(((await h.client.workflow.getHandle(quickId).result()) as TurnResult).answer).toBe('Quick answer.');
    await expect.poll(async () => (await h.client.workflow.getHandle(sent.turnId).fetchHistory()).events!.some((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'steer'), { timeout: 30_000, interval: 100 }).toBe(true);
    await client.approve(sent.sessionId);
    const out = await client.wait(sent.turnId, { timeoutMs: 60_000 });
    expect(out.kind === 'done' && out.result.answer).toBe('One runs.');
    const r = await h.complete((out as { result: TurnResult }).result);
    const results = toolResults(r.messages ?? []);
    expect(results[2]).toMatchObject({ ok: true, result: { agent: 'bg-slow', background: true } });
    expect(results[3]).toMatchObject({ ok: false, error_type: 'SUB_AGENT_LIMIT', recoverable: true });
    expect((results[3] as { message: string }).message).toMatch(/limits\.maxBackgroundAgents/);
    // The quick answer was the turn's, not a turn of its own.
    expect((await state(sent.sessionId)).turnCount).toBe(1);
    // The slow one waits for approval; ending the session cancels it.
    const slowId = `${sent.turnId}/agent-t1-s3-c0`;
    await expect.poll(async () => (await state(sent.sessionId)).pending?.agent?.turnId, { timeout: 30_000, interval: 100 }).toBe(slowId);
    await client.end(sent.sessionId);
    const slowResult = (await h.client.workflow.getHandle(slowId).result()) as TurnResult;
    expect(slowResult.terminated_by).toBe('cancelled');
    expect(filed).toEqual(['file_note mine']);
    for (const id of [sent.turnId, quickId, slowId, sent.sessionId]) await replays(id);
  }, 120_000);

  it('are cancelled with their session; one whose session is gone does not run', async () => {
    const waiter = defineAgent({ name: 'bg-waiter', instructions: 'You file.', model: scriptFile({ steps: [{ tool_calls: [{ name: 'file_note', arguments: { note: 'never' } }] }, { content: 'unreached' }] }), tools: [file] });
    const lead = defineAgent({
      name: 'bg-lead3',
      instructions: 'You delegate.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'agent__bg-waiter', arguments: { task: 'File.' } }] }, { content: 'Started.' }] }),
      agents: [{ agent: waiter, background: true }],
    });
    h.declarations.add({ agents: [lead.spec, waiter.spec] });
    const out = await client.run('Go.', { agent: 'bg-lead3' });
    const childId = `${out.turnId}/agent-t1-s1-c0`;
    await expect.poll(async () => (await state(out.sessionId)).pending?.agent?.turnId, { timeout: 30_000, interval: 100 }).toBe(childId);
    // The session workflow itself cancelled (not ended): its child is cancelled too.
    await h.client.workflow.getHandle(out.sessionId).cancel();
    expect(((await h.client.workflow.getHandle(childId).result()) as TurnResult).terminated_by).toBe('cancelled');
    await expect.poll(async () => (await h.client.workflow.getHandle(out.sessionId).describe()).status.name, { timeout: 30_000, interval: 100 }).toBe('CANCELLED');
    await replays(out.sessionId);
    await replays(childId);

    // A background child whose session is not there fails before any step.
    const sessionId = newSessionId('gone');
    const config = { ...scriptedConfig({ steps: [{ content: 'x' }] }), agent: 'bg-waiter', agentResolved: true as const };
    const turnId = `${sessionId}/turn-1/agent-t1-s1-c0`;
    const input: TurnInput = { sessionId, turn: 1, turnId, config, history: [], memory: {}, userMessage: 'x', modelCallBase: 0, subAgent: { depth: 1, path: ['bg-lead3', 'bg-waiter'], parentTurnId: `${sessionId}/turn-1`, background: true } };
    const gone = h.client.workflow.execute('turnWorkflow', { workflowId: turnId, taskQueue: h.taskQueue, args: [input], memo: { backgroundOf: sessionId, agentPath: ['bg-lead3', 'bg-waiter'] } });
    await expect(gone).rejects.toThrow();
    const history = await h.client.workflow.getHandle(turnId).fetchHistory();
    expect(history.events!.some((e) => e.activityTaskScheduledEventAttributes || e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toBe(false);
    expect(JSON.stringify(history.events!.at(-1)!.workflowExecutionFailedEventAttributes?.failure?.message)).toMatch(/has ended: its background sub-agent does not run/);
  }, 90_000);

  it("can't be added by a forged turn input, in the background either: nothing starts", async () => {
    const loner = defineAgent({ name: 'bg-loner', instructions: 'You work alone.', model: scriptFile({ steps: [{ content: 'x' }] }), policy: { mode: 'auto' } });
    h.declarations.add({ agents: [loner.spec] });
    const sessionId = newSessionId('forged-bg');
    const config = {
      ...scriptedConfig({ steps: [{ tool_calls: [{ name: 'agent__ghost', arguments: { task: 'Help.' } }] }, { content: 'Done.' }] }, {}, ALLOW_ALL),
      agent: 'bg-loner',
      agentResolved: true as const,
      subAgents: [{ name: 'ghost', description: 'Helps.', background: true as const }],
    };
    const input: TurnInput = { sessionId, turn: 1, turnId: `${sessionId}/turn-1`, config, history: [], memory: {}, userMessage: 'help', modelCallBase: 0 };
    const r = await h.complete((await h.client.workflow.execute('turnWorkflow', { workflowId: input.turnId, taskQueue: h.taskQueue, args: [input] })) as TurnResult);
    expect(toolResults(r.messages ?? [])[0]).toMatchObject({ ok: false, error_type: 'SUB_AGENT_NOT_ALLOWED', recoverable: false });
    await expect(h.client.workflow.getHandle(`${input.turnId}/agent-${r.toolCalls[0]!.callId}`).describe()).rejects.toThrow(/not found/i);
    await replays(input.turnId);
  }, 60_000);
});
