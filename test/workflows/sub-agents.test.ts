/**
 * Sub-agents through real Temporal, under the default policy: an agent that lists another
 * (`agents: [researcher]`) is offered it as the tool `agent__researcher`; calling it starts a child
 * turn workflow (`<turnId>/agent-<callId>`) with the researcher's own instructions, tools and
 * model (its own script), whose answer is the call's result, and whose spend counts in the
 * parent's. A sub-agent's approval shows in the session's pending list with its path and is
 * decided there. Nesting past limits.maxAgentDepth is a structured error the model reads; a turn
 * whose input forges a sub-agent its agent does not list starts nothing. Each history replays.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { defineAgent } from '../../index';
import { HarnessClient } from '../../api/client';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import { replayHistory } from '../../history/replay/replay';
import { loadTrace } from '../../history/trace';
import { loadLedger } from '../../history/ledger/load';
import { decodePayload } from '../../history/trace/events';
import { ALLOW_ALL, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { factTools } from '../support/fact-tools';
import { scriptFiles } from '../support/agent-scripts';
import { taskFailures } from '../support/watched-turn';
import { toolResults } from '../support/watched-turn';
import { Receiver } from '../support/webhook-receiver';

const { runs, lookup, file } = factTools();

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-sub-agents-'));
let h: TestHarness;
let client: HarnessClient;
let hook: Receiver | undefined;

const scriptFile = scriptFiles(dir);

beforeAll(async () => {
  h = await startHarness({ tools: [lookup, file], env: { WEBHOOK_SECRET: 'sub-agent-hook-secret' } });
  client = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {}, cwd: dir });
});
afterAll(async () => {
  await h?.stop();
  await hook?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The turn's history (and any workflow's) replayed against the current code. */
async function replays(workflowId: string): Promise<void> {
  const history = await h.client.workflow.getHandle(workflowId).fetchHistory();
  expect(await replayHistory(history, workflowId, inject('workflowBundle'))).toEqual({ ok: true });
}

describe('sub-agents', () => {
  it("run as a child turn with their own instructions, tools and model; the answer is the call's result", async () => {
    runs.length = 0;
    const researcher = defineAgent({
      name: 'researcher',
      description: 'Finds facts.',
      instructions: 'You are the researcher.',
      model: scriptFile({
        steps: [
          { expect: { system_contains: 'You are the researcher.' }, tool_calls: [{ name: 'look_fact', arguments: { topic: 'answer' } }] },
          { expect: { last_message_contains: 'answer is 42' }, content: 'The answer is 42.' },
        ],
      }),
      tools: [lookup],
    });
    const lead = defineAgent({
      name: 'lead',
      instructions: 'You lead.',
      model: scriptFile({
        steps: [
          { expect: { tools_include: 'agent__researcher' }, tool_calls: [{ name: 'agent__researcher', arguments: { task: 'Find the answer.' } }] },
          { expect: { last_message_contains: 'The answer is 42.' }, content: 'Done: 42.' },
        ],
      }),
      agents: [researcher],
      budget: { turn: { tokens: 1_000_000 } },
    });
    h.declarations.add({ agents: [lead.spec, researcher.spec] });
    const out = await client.run('What is the answer?', { agent: 'lead' });
    expect(out.kind).toBe('done');
    const r = await h.complete(out.result!);
    expect([r.terminated_by, r.answer]).toEqual(['final_answer', 'Done: 42.']);
    const [called] = toolResults(r.messages ?? []);
    expect(called).toEqual({ ok: true, result: { answer: 'The answer is 42.', agent: 'researcher' } });
    expect(runs).toEqual(['look_fact answer']);
    // The child is a turn workflow of its own, with its own history.
    const childId = `${out.turnId}/agent-${r.toolCalls[0]!.callId}`;
    const child = (await h.client.workflow.getHandle(childId).result()) as TurnResult;
    expect([child.terminated_by, child.answer, child.toolCalls.map((c) => c.name)]).toEqual(['final_answer', 'The answer is 42.', ['look_fact']]);
    // Its turn budget is what was left of the parent's when the call started it.
    const childHistory = await h.client.workflow.getHandle(childId).fetchHistory();
    const childInput = decodePayload(childHistory.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]) as TurnInput;
    // (the parent had spent its first model call: something, and less than its whole spend).
    expect(childInput.config.limits.budget?.turn?.tokens).toBeLessThan(1_000_000);
    expect(childInput.config.limits.budget?.turn?.tokens).toBeGreaterThan(1_000_000 - (r.spend!.tokens - child.spend!.tokens));
    expect(childInput.subAgent).toEqual({ depth: 1, path: ['lead', 'researcher'], parentTurnId: out.turnId });
    // Its spend is the parent's too, and so in `harness cost`.
    expect(r.spend!.tokens).toBeGreaterThan(child.spend!.tokens);
    const [ledger, childLedger] = await Promise.all([loadLedger(h.client, out.turnId), loadLedger(h.client, childId)]);
    expect(ledger.total.total_tokens).toBe(r.spend!.tokens);
    expect(ledger.byKind.model.calls).toBe(childLedger.byKind.model.calls + 2);
    expect([...(await taskFailures(h.client, out.turnId)), ...(await taskFailures(h.client, childId))]).toEqual([]);
    // The trace nests the child's turn under the call that started it.
    const trace = await loadTrace(h.client, out.turnId);
    const call = trace.spans.find((s) => s.span.type === 'tool_call' && s.span.name === 'agent__researcher')!.span;
    const childTurn = trace.spans.find((s) => s.span.type === 'turn' && s.span.name === childId)!.span;
    expect(childTurn.parent_id).toBe(call.span_id);
    const childCall = trace.spans.find((s) => s.span.type === 'tool_call' && s.span.name === 'look_fact')!.span;
    const childStep = trace.spans.find((s) => s.span.span_id === childCall.parent_id)!.span;
    expect(childStep.parent_id).toBe(childTurn.span_id);
    await replays(out.turnId);
    await replays(childId);
  }, 90_000);

  it("surface a sub-agent's approval in the session's pending list with its path; approving lets the child go on", async () => {
    runs.length = 0;
    const clerk = defineAgent({
      name: 'clerk',
      instructions: 'You file notes.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'file_note', arguments: { note: 'n-1' } }] }, { content: 'Filed n-1.' }] }),
      tools: [file],
    });
    const boss = defineAgent({
      name: 'boss',
      instructions: 'You delegate.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'agent__clerk', arguments: { task: 'File n-1.' } }] }, { content: 'All filed.' }] }),
      agents: ['clerk'],
    });
    h.declarations.add({ agents: [boss.spec, clerk.spec] });
    const sent = await client.send('File it.', { agent: 'boss' });
    let pending = await client.pending({ taskQueue: h.taskQueue });
    for (let i = 0; i < 100 && !pending.some((p) => p.sessionId === sent.sessionId); i++) {
      await new Promise((res) => setTimeout(res, 200));
      pending = await client.pending({ taskQueue: h.taskQueue });
    }
    const mine = pending.filter((p) => p.sessionId === sent.sessionId);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ kind: 'approval', tool: 'file_note', agentPath: ['boss', 'clerk'] });
    expect(runs).toEqual([]);
    await client.approve(sent.sessionId, { callIds: [(mine[0] as { callId: string }).callId] });
    const out = await client.wait(sent.turnId);
    expect(out.kind).toBe('done');
    expect(out.result!.answer).toBe('All filed.');
    expect(runs).toEqual(['file_note n-1']);
    await replays(sent.turnId);
  }, 90_000);

  it("surface a sub-agent's question, answered by session; cancelling the session's turn cancels the child", async () => {
    const asker = defineAgent({
      name: 'asker',
      instructions: 'You ask.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] }, { expect: { last_message_contains: 'blue' }, content: 'Blue it is.' }] }),
    });
    const host = defineAgent({
      name: 'host',
      instructions: 'You host.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'agent__asker', arguments: { task: 'Ask.' } }] }, { expect: { last_message_contains: 'Blue it is.' }, content: 'Blue.' }, { tool_calls: [{ name: 'agent__asker', arguments: { task: 'Ask again.' } }] }] }),
      agents: [asker],
    });
    h.declarations.add({ agents: [host.spec, asker.spec] });
    const sent = await client.send('Pick.', { agent: 'host' });
    const asked = await client.wait(sent.turnId, { timeoutMs: 60_000 });
    expect(asked.kind).toBe('waiting');
    const pending = asked.kind === 'waiting' ? asked.state.pending : undefined;
    expect(pending).toMatchObject({ kind: 'question', question: 'Which colour?', agent: { path: ['host', 'asker'], turnId: `${sent.turnId}/agent-t1-s1-c0` } });
    // The parent turn refuses an answer sent to it, naming the child.
    await expect(h.client.workflow.getHandle(sent.turnId).executeUpdate('answer', { args: [{ text: 'blue' }] })).rejects.toThrow();
    await client.answer(sent.sessionId, 'blue');
    const out = await client.wait(sent.turnId, { timeoutMs: 60_000 });
    expect(out.kind === 'done' && out.result.answer).toBe('Blue.');

    // Again, cancelled while the child waits: both turns end cancelled.
    const again = await client.send('Pick again.', { sessionId: sent.sessionId });
    const waiting = await client.wait(again.turnId, { timeoutMs: 60_000 });
    expect(waiting.kind).toBe('waiting');
    await client.cancel(again.turnId);
    const cancelled = await client.wait(again.turnId, { timeoutMs: 60_000 });
    expect(cancelled.kind === 'done' && cancelled.result.terminated_by).toBe('cancelled');
    const child = (await h.client.workflow.getHandle(`${again.turnId}/agent-t2-s1-c0`).result()) as TurnResult;
    expect(child.terminated_by).toBe('cancelled');
    expect([...(await taskFailures(h.client, again.turnId)), ...(await taskFailures(h.client, sent.turnId))]).toEqual([]);
    await replays(sent.turnId);
    await replays(again.turnId);
  }, 90_000);

  it("post a sub-agent's approval to the session's webhook, with its path and the ids to decide by session", async () => {
    hook = new Receiver();
    await hook.start();
    const clerk = defineAgent({
      name: 'clerk3',
      instructions: 'You file notes.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'file_note', arguments: { note: 'n-3' } }] }, { content: 'Filed n-3.' }] }),
      tools: [file],
    });
    const boss = defineAgent({
      name: 'boss3',
      instructions: 'You delegate.',
      model: scriptFile({ steps: [{ tool_calls: [{ name: 'agent__clerk3', arguments: { task: 'File n-3.' } }] }, { content: 'All filed.' }] }),
      agents: [clerk],
      notify: { url: hook.url, secret: 'env:WEBHOOK_SECRET' },
    });
    h.declarations.add({ agents: [boss.spec, clerk.spec] });
    const sent = await client.send('File it.', { agent: 'boss3' });
    await expect.poll(() => hook!.received.length, { timeout: 30_000, interval: 100 }).toBe(1);
    const body = hook.received[0]!.body as { kind: string; session_id: string; turn_id: string; agent_path: string[]; calls: Array<{ call_id: string; digest: string; tool: string }> };
    expect(body).toMatchObject({ kind: 'approval', session_id: sent.sessionId, turn_id: `${sent.turnId}/agent-t1-s1-c0`, agent_path: ['boss3', 'clerk3'] });
    expect(body.calls.map((c) => c.tool)).toEqual(['file_note']);
    await client.decide(sent.sessionId, { calls: [{ callId: body.calls[0]!.call_id, digest: body.calls[0]!.digest }], approve: true });
    const out = await client.wait(sent.turnId, { timeoutMs: 60_000 });
    expect(out.kind === 'done' && out.result.answer).toBe('All filed.');
  }, 90_000);

  it('are bounded in depth: past limits.maxAgentDepth the call is a structured error the model reads', async () => {
    const leaf = defineAgent({ name: 'leaf', instructions: 'You are a leaf.', model: scriptFile({ steps: [{ content: 'leaf' }] }) });
    const shallow = defineAgent({
      name: 'shallow',
      instructions: 'You may not nest.',
      model: scriptFile({
        steps: [
          { tool_calls: [{ name: 'agent__leaf', arguments: { task: 'Say leaf.' } }] },
          { expect: { last_message_contains: 'SUB_AGENT_LIMIT' }, content: 'Could not.' },
        ],
      }),
      agents: [leaf],
      limits: { maxAgentDepth: 0 },
    });
    h.declarations.add({ agents: [shallow.spec, leaf.spec] });
    const out = await client.run('Go.', { agent: 'shallow' });
    const r = await h.complete(out.result!);
    expect(r.answer).toBe('Could not.');
    const [called] = toolResults(r.messages ?? []);
    expect(called).toMatchObject({ ok: false, error_type: 'SUB_AGENT_LIMIT', recoverable: false });
    expect((called as { message: string }).message).toMatch(/^leaf was not started: sub-agents may nest 0 deep \(limits\.maxAgentDepth\)/);
  }, 90_000);

  it('run together when called in one step, up to limits.maxSubAgentCalls a turn', async () => {
    const helper = defineAgent({ name: 'helper2', instructions: 'You help.', model: scriptFile({ steps: [{ content: 'helped' }] }) });
    const fan = defineAgent({
      name: 'fan',
      instructions: 'You fan out.',
      model: scriptFile({
        steps: [
          { tool_calls: [1, 2, 3].map((n) => ({ name: 'agent__helper2', arguments: { task: `Task ${n}.` } })) },
          { expect: { messages_contain: 'SUB_AGENT_LIMIT' }, content: 'Two helped.' },
        ],
      }),
      agents: [helper],
      limits: { maxSubAgentCalls: 2 },
    });
    h.declarations.add({ agents: [fan.spec, helper.spec] });
    const out = await client.run('Go.', { agent: 'fan' });
    const r = await h.complete(out.result!);
    expect(r.answer).toBe('Two helped.');
    const results = toolResults(r.messages ?? []);
    expect(results.slice(0, 2)).toEqual([
      { ok: true, result: { answer: 'helped', agent: 'helper2' } },
      { ok: true, result: { answer: 'helped', agent: 'helper2' } },
    ]);
    expect(results[2]).toMatchObject({ ok: false, error_type: 'SUB_AGENT_LIMIT' });
    // The two children were started in one workflow task, before either ended.
    const history = await h.client.workflow.getHandle(out.turnId).fetchHistory();
    const kinds = (history.events ?? []).map((e) => (e.startChildWorkflowExecutionInitiatedEventAttributes ? 'start' : e.childWorkflowExecutionCompletedEventAttributes ? 'end' : undefined)).filter(Boolean);
    expect(kinds).toEqual(['start', 'start', 'end', 'end']);
    await replays(out.turnId);
  }, 90_000);

  it("can't be added by a forged turn input: the worker refuses a sub-agent the session's agent does not list", async () => {
    runs.length = 0;
    const loner = defineAgent({ name: 'loner', instructions: 'You work alone.', model: scriptFile({ steps: [{ content: 'x' }] }), policy: { mode: 'auto' } });
    const helper = defineAgent({ name: 'helper', instructions: 'You help.', model: scriptFile({ steps: [{ tool_calls: [{ name: 'look_fact', arguments: { topic: 'forged' } }] }, { content: 'helped' }] }), tools: [lookup] });
    h.declarations.add({ agents: [loner.spec, helper.spec] });
    const sessionId = newSessionId('forged');
    const config = {
      ...scriptedConfig({ steps: [{ tool_calls: [{ name: 'agent__helper', arguments: { task: 'Help.' } }] }, { content: 'Done.' }] }, {}, ALLOW_ALL),
      agent: 'loner',
      agentResolved: true as const,
      subAgents: [{ name: 'helper', description: 'Helps.' }],
    };
    const input: TurnInput = { sessionId, turn: 1, turnId: `${sessionId}/turn-1`, config, history: [], memory: {}, userMessage: 'help', modelCallBase: 0 };
    const r = await h.complete((await h.client.workflow.execute('turnWorkflow', { workflowId: input.turnId, taskQueue: h.taskQueue, args: [input] })) as TurnResult);
    const [called] = toolResults(r.messages ?? []);
    expect(called).toMatchObject({ ok: false, error_type: 'SUB_AGENT_NOT_ALLOWED', recoverable: false });
    expect((called as { message: string }).message).toBe(`helper was not started: "helper" is not one of agent "loner"'s sub-agents (it has none)`);
    expect(runs).toEqual([]);
    await expect(h.client.workflow.getHandle(`${input.turnId}/agent-${r.toolCalls[0]!.callId}`).describe()).rejects.toThrow(/not found/i);
  }, 90_000);
});
