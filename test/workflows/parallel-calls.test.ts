/**
 * Calls of one step that are safe to run together run at the same time, through the real turn
 * and session workflows on the test dev server: three calls of a `parallel` custom tool that each
 * take 2 s run over one another, and their results reach the conversation and the call records
 * in call order; a call that is not parallel-safe runs alone between its neighbours; calls that
 * ask are asked together in one request and, approved, run together; the built-in reads (local
 * activities) run together; questions two MCP servers ask during calls that run together are
 * shown one at a time; a turn cancelled during such a group ends as cancelled with every call
 * answered. Each history of the new code replays, and carries the `parallel-tool-calls`
 * marker. No assertion on how long anything took: overlap is read from when each call started and
 * ended.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { defaultPayloadConverter } from '@temporalio/common';
import { defineTool } from '../../index';
import type { TurnResult } from '../../deterministic/session';
import type { ChatMessage, ToolResult } from '../../deterministic/types';
import { CANCELLED_CALL_MESSAGE } from '../../deterministic/errors';
import { answerQuestion, decideApprovals, sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { replayHistory } from '../../history/replay/replay';
import { loadTrace } from '../../history/trace';
import { PARALLEL_CALLS_PATCH } from '../../workflows/turn/patches';
import type { SessionConfig } from '../../deterministic/session-config';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { everythingStdio, until } from '../support/mcp-servers';

/** When each call (by its `key` argument) started and ended on the worker. */
const spans = new Map<string, { start: number; end?: number }>();
let started: Array<() => void> = [];

const work = async (key: string, ms: number, signal: AbortSignal) => {
  spans.set(key, { start: Date.now() });
  for (const f of started) f();
  await sleep(ms, undefined, { signal });
  spans.get(key)!.end = Date.now();
  return { key };
};

const lookUp = defineTool({
  name: 'look_up',
  description: 'Looks a key up in a slow directory (2 s). Returns the key.',
  schema: z.object({ key: z.string() }),
  risk: 'read_only',
  parallel: true,
  timeoutSec: 60,
  run: ({ key }, ctx) => work(key, 2_000, ctx.signal),
});

const note = defineTool({
  name: 'take_note',
  description: 'Writes a note in the ledger (1 s); runs alone.',
  schema: z.object({ key: z.string() }),
  risk: 'read_only',
  idempotent: true,
  run: ({ key }, ctx) => work(key, 1_000, ctx.signal),
});

const save = defineTool({
  name: 'save_copy',
  description: 'Saves a copy of a record elsewhere (2 s); a write, so the default policy asks.',
  schema: z.object({ key: z.string() }),
  risk: 'write',
  parallel: true,
  run: ({ key }, ctx) => work(key, 2_000, ctx.signal),
});

const hang = defineTool({
  name: 'wait_long',
  description: 'Waits a long time (until cancelled); safe to run together.',
  schema: z.object({ key: z.string() }),
  risk: 'read_only',
  parallel: true,
  timeoutSec: 300,
  run: ({ key }, ctx) => work(key, 300_000, ctx.signal),
});

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness({ tools: [lookUp, note, save, hang] });
});
afterAll(async () => h?.stop());

const call = (name: string, key: string) => ({ name, arguments: { key } });

/** The tool results of the conversation, in the order it holds them: [call id, result]. */
function results(messages: ChatMessage[]): Array<[string, ToolResult]> {
  return messages.flatMap((m): Array<[string, ToolResult]> => (m.role === 'tool' ? [[m.tool_call_id, JSON.parse(m.content) as ToolResult]] : []));
}

/** Whether every interval started before any of them ended: they ran over one another. */
function overlap(keys: string[]): boolean {
  const s = keys.map((k) => spans.get(k)!);
  return Math.max(...s.map((x) => x.start)) < Math.min(...s.map((x) => x.end!));
}

/** The patch ids a turn's history recorded, and whether that history replays with the current code. */
async function checkHistory(turnId: string): Promise<string[]> {
  const history = await h.client.workflow.getHandle(turnId).fetchHistory();
  expect(await replayHistory(history, turnId, inject('workflowBundle'))).toEqual({ ok: true });
  return history
    .events!.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')
    .map((e) => defaultPayloadConverter.fromPayload<{ id: string }>(e.markerRecordedEventAttributes!.details!['patch-data']!.payloads![0]!).id);
}

describe('calls of one step that are safe to run together', () => {
  it('run at the same time (three 2 s calls over one another), their results in call order, and the history replays', async () => {
    const sessionId = newSessionId('par');
    const script = { steps: [{ tool_calls: [call('look_up', 'a1'), call('look_up', 'b1'), call('look_up', 'c1')] }, { expect: { messages_contain: 'c1' }, content: 'All looked up. HARNESS_OK' }] };
    const r = await h.finish(sessionId, scriptedConfig(script), 'look up three keys');
    expect(r.terminated_by).toBe('final_answer');
    expect(overlap(['a1', 'b1', 'c1'])).toBe(true);

    expect(results(r.messages!)).toEqual([
      ['t1-s1-c0', { ok: true, result: { key: 'a1' } }],
      ['t1-s1-c1', { ok: true, result: { key: 'b1' } }],
      ['t1-s1-c2', { ok: true, result: { key: 'c1' } }],
    ]);
    expect(r.toolCalls.map((c) => [c.callId, c.name, c.ok])).toEqual([
      ['t1-s1-c0', 'look_up', true],
      ['t1-s1-c1', 'look_up', true],
      ['t1-s1-c2', 'look_up', true],
    ]);

    // Scheduled in call order by one workflow task: the three events follow one another.
    const { events } = await h.client.workflow.getHandle(r.turnId).fetchHistory();
    const at = events!.flatMap((e, i) => (e.activityTaskScheduledEventAttributes?.activityType?.name === 'executeTool' ? [i] : []));
    expect(at).toHaveLength(3);
    expect(at[2]! - at[0]!).toBe(2);
    const args = at.map((i) => defaultPayloadConverter.fromPayload<{ args: { key: string } }>(events![i]!.activityTaskScheduledEventAttributes!.input!.payloads![0]!).args.key);
    expect(args).toEqual(['a1', 'b1', 'c1']);
    expect(await checkHistory(r.turnId)).toContain(PARALLEL_CALLS_PATCH);
  });

  it('a call that is not safe to run together runs alone between them: it starts after the calls before it end, the calls after it start after it ends', async () => {
    const sessionId = newSessionId('par-mixed');
    const steps = [{ tool_calls: [call('look_up', 'a2'), call('look_up', 'b2'), call('take_note', 'n2'), call('look_up', 'c2'), call('look_up', 'd2')] }, { content: 'Done. HARNESS_OK' }];
    const r = await h.finish(sessionId, scriptedConfig({ steps }), 'look up and note');
    expect(r.terminated_by).toBe('final_answer');
    const [a, b, n, c, d] = ['a2', 'b2', 'n2', 'c2', 'd2'].map((k) => spans.get(k)!);
    expect(n!.start).toBeGreaterThanOrEqual(Math.max(a!.end!, b!.end!));
    expect(Math.min(c!.start, d!.start)).toBeGreaterThanOrEqual(n!.end!);
    expect(overlap(['a2', 'b2'])).toBe(true);
    expect(overlap(['c2', 'd2'])).toBe(true);
    expect(results(r.messages!).map(([id, res]) => [id, (res.result as { key: string }).key])).toEqual([
      ['t1-s1-c0', 'a2'],
      ['t1-s1-c1', 'b2'],
      ['t1-s1-c2', 'n2'],
      ['t1-s1-c3', 'c2'],
      ['t1-s1-c4', 'd2'],
    ]);
    expect(await checkHistory(r.turnId)).toContain(PARALLEL_CALLS_PATCH);
  });

  it('that ask are asked together in one approval request and, approved, run together', async () => {
    const sessionId = newSessionId('par-ask');
    const steps = [{ tool_calls: [call('save_copy', 'a3'), call('save_copy', 'b3')] }, { content: 'Saved. HARNESS_OK' }];
    const out = await h.turn(sessionId, scriptedConfig({ steps }), 'save two copies');
    expect(out.kind).toBe('waiting');
    if (out.kind !== 'waiting') return;
    expect(out.state.pending).toMatchObject({ kind: 'approvals', calls: [{ callId: 't1-s1-c0', tool: 'save_copy' }, { callId: 't1-s1-c1', tool: 'save_copy' }] });
    expect(spans.has('a3') || spans.has('b3')).toBe(false);

    await decideApprovals(h.client, sessionId, { approve: true });
    const done = await waitForTurn(h.client, out.state.turnId, { pollMs: 100 });
    expect(done.kind).toBe('done');
    if (done.kind !== 'done') return;
    expect(done.result.toolCalls.map((c) => [c.callId, c.ok, c.approval?.approved])).toEqual([
      ['t1-s1-c0', true, true],
      ['t1-s1-c1', true, true],
    ]);
    expect(overlap(['a3', 'b3'])).toBe(true);
  });

  it('the built-in reads (local activities) run together, their results in call order', async () => {
    const sessionId = newSessionId('par-read');
    const ws = path.join(h.home, 'workspaces', sessionId);
    mkdirSync(ws, { recursive: true });
    for (const f of ['x', 'y', 'z']) writeFileSync(path.join(ws, `${f}.txt`), `content of ${f}`);
    const steps = [{ tool_calls: ['x', 'y', 'z'].map((f) => ({ name: 'read_file', arguments: { path: `${f}.txt` } })) }, { content: 'Read. HARNESS_OK' }];
    const r = await h.finish(sessionId, scriptedConfig({ steps }), 'read three files');
    expect(r.terminated_by).toBe('final_answer');
    expect(results(r.messages!).map(([id, res]) => [id, res.ok, JSON.stringify(res.result)])).toEqual([
      ['t1-s1-c0', true, expect.stringContaining('content of x')],
      ['t1-s1-c1', true, expect.stringContaining('content of y')],
      ['t1-s1-c2', true, expect.stringContaining('content of z')],
    ]);
    expect(await checkHistory(r.turnId)).toContain(PARALLEL_CALLS_PATCH);
    // The trace pairs each marker with its own call, whatever order the markers were recorded in.
    const calls = (await loadTrace(h.client, r.turnId)).spans.map((s) => s.span).filter((s) => s.type === 'tool_call');
    expect(calls.map((s) => [(s.input as { args: { path: string } }).args.path, JSON.stringify(s.output)])).toEqual(
      ['x', 'y', 'z'].map((f) => [`${f}.txt`, expect.stringContaining(`content of ${f}`)]),
    );
    expect(calls.every((s) => (s.output as { execution?: { kind?: string } }).execution?.kind === 'local_activity')).toBe(true);
  });

  it('questions two MCP servers ask during calls that run together are shown one at a time, and each answer reaches its call', async () => {
    const sessionId = newSessionId('par-mcp');
    // The entries make the asking tool a read: safe to run together (and allowed).
    const asking = { 'trigger-elicitation-request': { risk: 'read_only' as const } };
    const servers = ['ea', 'eb'].map((name) => everythingStdio({ name, tools: asking }));
    const steps = [{ tool_calls: servers.map((s) => ({ name: `mcp__${s.name}__trigger-elicitation-request`, arguments: {} })) }, { content: 'Both answered. HARNESS_OK' }];
    const config: SessionConfig = { ...scriptedConfig({ steps }), mcp: { servers } };
    h.declareUsed(config);
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'ask me twice' });
    // Both servers asked before anyone answers: the second question waits behind the first.
    const questions = async () => ((await h.client.workflow.getHandle(turnId).fetchHistory()).events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'mcpQuestion').length;
    await until(async () => (await questions()) === 2, 60_000);
    const shown: string[] = [];
    for (const name of ['Ada Lovelace', 'Grace Hopper']) {
      let key = '';
      await until(async () => {
        const p = (await sessionState(h.client, sessionId)).pending;
        key = p?.kind === 'question' && !shown.includes(p.callId) ? p.callId : '';
        return key !== '';
      }, 60_000);
      shown.push(key);
      await answerQuestion(h.client, sessionId, JSON.stringify({ name, check: true, email: 'someone@example.org' }), undefined, key);
    }
    // One question of each call, one after the other.
    expect(shown.map((k) => k.replace(/#e\d+$/, '')).sort()).toEqual(['t1-s1-c0', 't1-s1-c1']);
    const r = await h.complete((await h.client.workflow.getHandle(turnId).result()) as TurnResult);
    expect(r.terminated_by).toBe('final_answer');
    const got = results(r.messages!);
    expect(got.map(([id, res]) => [id, res.ok])).toEqual([
      ['t1-s1-c0', true],
      ['t1-s1-c1', true],
    ]);
    // Each call got the answer given to its own question.
    const answerOf = (callId: string) => (shown[0]!.startsWith(`${callId}#`) ? 'Ada Lovelace' : 'Grace Hopper');
    for (const [id, res] of got) expect(JSON.stringify(res.result)).toContain(answerOf(id));
    expect(await checkHistory(turnId)).toContain(PARALLEL_CALLS_PATCH);
    // Both questions came before the first answer, and each was shown and answered in turn.
    const { events } = await h.client.workflow.getHandle(turnId).fetchHistory();
    const order = events!.flatMap((e) =>
      e.workflowExecutionSignaledEventAttributes?.signalName === 'mcpQuestion' ? ['question'] : e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'answer' ? ['answer'] : [],
    );
    expect(order).toEqual(['question', 'question', 'answer', 'answer']);
  });

  it('a turn cancelled while they run ends as cancelled, each call answered as cancelled in call order, and its history replays', async () => {
    const sessionId = newSessionId('par-cancel');
    const keys = ['a4', 'b4', 'c4'];
    const allStarted = new Promise<void>((resolve) => {
      started = [() => keys.every((k) => spans.has(k)) && resolve()];
    });
    const steps = [{ tool_calls: keys.map((k) => call('wait_long', k)) }, { content: 'never' }];
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config: scriptedConfig({ steps }), text: 'wait' });
    await allStarted;
    started = [];
    await h.client.workflow.getHandle(turnId).cancel();
    const r = await h.complete((await h.client.workflow.getHandle(turnId).result()) as TurnResult);
    expect(r.terminated_by).toBe('cancelled');
    expect(results(r.messages!).map(([id, res]) => [id, res.ok, res.message])).toEqual([
      ['t1-s1-c0', false, CANCELLED_CALL_MESSAGE],
      ['t1-s1-c1', false, CANCELLED_CALL_MESSAGE],
      ['t1-s1-c2', false, CANCELLED_CALL_MESSAGE],
    ]);
    expect(await checkHistory(turnId)).toContain(PARALLEL_CALLS_PATCH);
  });
});
