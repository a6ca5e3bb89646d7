/**
 * How a turn behaves when what it runs on fails or is cancelled: a tool activity that fails
 * after its retries is a result the model sees, cancellation ends the turn as `cancelled` (also
 * during a model call or a compression), tool activities run with their own timeout and a
 * heartbeat, and the compression trigger counts CJK text at its real weight.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelAnswer, ModelClient, ModelRequest } from '../../activities/model/client';
import type { SandboxPool } from '../../activities/sandbox/pool';
import type { Sandbox } from '../../activities/sandbox/sandbox';
import { DEFAULT_COMPRESSION } from '../../deterministic/context/plan';
import type { TurnResult } from '../../deterministic/session';
import type { SessionState } from '../../deterministic/session-state';
import type { ChatMessage, ToolResult } from '../../deterministic/types';
import { sendMessage, sessionState } from '../../client/session-client';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';


const toolResults = (messages: ChatMessage[]): ToolResult[] =>
  messages.flatMap((m) => (m.role === 'tool' ? [JSON.parse(m.content) as ToolResult] : []));

describe('a tool activity that fails after its retries', () => {
  let h: TestHarness;
  // A sandbox whose engine breaks in a way the tool does not understand: the activity fails.
  const broken: Sandbox = {
    exec: async () => {
      throw new Error('docker engine exploded');
    },
    ensure: async () => undefined,
    remove: async () => undefined,
  };
  beforeAll(async () => {
    h = await startHarness({ sandboxes: { get: () => broken, remove: async () => undefined } as unknown as SandboxPool });
  });
  afterAll(async () => {
    await h?.stop();
    if (h?.home) rmSync(h.home, { recursive: true, force: true });
  });

  it('becomes SANDBOX_UNAVAILABLE for the model and the turn goes on, with the per-tool timeout and a heartbeat on the activity', async () => {
    const script = {
      steps: [
        { tool_calls: [{ name: 'run_shell', arguments: { command: 'ls' } }] },
        { expect: { last_message_contains: 'SANDBOX_UNAVAILABLE' }, content: 'The sandbox is down; I will say so. HARNESS_OK' },
      ],
    };
    const r = await h.finish(newSessionId('toolfail'), scriptedConfig(script, {}, DEFAULT_POLICY), 'list the files');
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('The sandbox is down; I will say so. HARNESS_OK');
    const [result] = toolResults(r.messages);
    expect(result).toMatchObject({ ok: false, error_type: 'SANDBOX_UNAVAILABLE', recoverable: true });
    expect(result!.message).toMatch(/run_shell could not be run: .*docker engine exploded/);
    expect(r.toolCalls).toEqual([expect.objectContaining({ name: 'run_shell', ok: false, error_type: 'SANDBOX_UNAVAILABLE' })]);

    const events = (await h.client.workflow.getHandle(r.turnId).fetchHistory()).events ?? [];
    const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'executeTool');
    expect(scheduled).toHaveLength(1);
    const a = scheduled[0]!.activityTaskScheduledEventAttributes!;
    // run_shell's own 620 s bound plus a margin, not one fixed bound for every tool; a heartbeat
    // every few seconds, so a dead worker is noticed in seconds rather than at the timeout.
    expect(Number(a.startToCloseTimeout!.seconds)).toBe(650);
    expect(Number(a.heartbeatTimeout!.seconds)).toBe(10);
    const attempts = events.filter((e) => e.activityTaskFailedEventAttributes || e.activityTaskCompletedEventAttributes);
    expect(attempts.length).toBeGreaterThanOrEqual(1);
  });
});

describe('cancellation', () => {
  let h: TestHarness;
  // A model that never answers a chosen kind of call until it is aborted; otherwise it answers.
  let hangOn: 'turn' | 'compress' | undefined;
  let hung: () => void = () => undefined;
  const model: ModelClient = {
    async complete(req: ModelRequest): Promise<ModelAnswer> {
      const purpose = req.headers['x-harness-purpose'];
      if (purpose === hangOn) {
        hung();
        await new Promise((_, reject) => req.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
      }
      const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
      if (purpose === 'compress') return { content: 'Summary of earlier work.', toolCalls: [], usage, model: 'fake' };
      // Turn calls: read the big files one after the other, then answer.
      const reads = req.messages.filter((m) => m.role === 'tool').length;
      if (reads < 4) return { content: null, toolCalls: [{ id: '', name: 'read_file', arguments: JSON.stringify({ path: `big${reads}.txt` }) }], usage, model: 'fake' };
      return { content: 'All read. HARNESS_OK', toolCalls: [], usage, model: 'fake' };
    },
  };
  beforeAll(async () => {
    h = await startHarness({ modelClient: model });
  });
  afterAll(async () => {
    await h?.stop();
    if (h?.home) rmSync(h.home, { recursive: true, force: true });
  });

  async function idle(sessionId: string): Promise<SessionState> {
    await expect.poll(async () => (await sessionState(h.client, sessionId)).status, { timeout: 30_000, interval: 50 }).toBe('idle');
    return sessionState(h.client, sessionId);
  }

  it('during a model call ends the turn as cancelled, not failed, and the session takes the next message', async () => {
    const sessionId = newSessionId('cancel-model');
    const ws = path.join(h.home, 'workspaces', sessionId);
    mkdirSync(ws, { recursive: true });
    for (let i = 0; i < 4; i++) writeFileSync(path.join(ws, `big${i}.txt`), 'small');
    hangOn = 'turn';
    const started = new Promise<void>((resolve) => (hung = resolve));
    const config = scriptedConfig({ steps: [] });
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'read everything' });
    await started;
    await h.client.workflow.getHandle(turnId).cancel();
    const r = (await h.client.workflow.getHandle(turnId).result()) as TurnResult;
    expect(r.terminated_by).toBe('cancelled');
    expect(r.error).toBeUndefined();
    const state = await idle(sessionId);
    expect(state.lastTurn?.terminated_by).toBe('cancelled');

    hangOn = undefined;
    const next = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, text: 'again' });
    const r2 = (await h.client.workflow.getHandle(next.turnId).result()) as TurnResult;
    expect(r2.terminated_by).toBe('final_answer');
  });

  it('during a compression is not swallowed by it: the turn ends as cancelled, with every call of the conversation answered', async () => {
    const sessionId = newSessionId('cancel-compress');
    const ws = path.join(h.home, 'workspaces', sessionId);
    mkdirSync(ws, { recursive: true });
    for (let i = 0; i < 4; i++) writeFileSync(path.join(ws, `big${i}.txt`), `${'line of text '.repeat(8)}\n`.repeat(120));
    hangOn = 'compress';
    const started = new Promise<void>((resolve) => (hung = resolve));
    const config = {
      ...scriptedConfig({ steps: [] }),
      compression: { ...DEFAULT_COMPRESSION, contextWindow: 3_000, outputReserve: 500, threshold: 0.5, keepTail: 2 },
    };
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'read everything' });
    await started;
    await h.client.workflow.getHandle(turnId).cancel();
    const done = (await h.client.workflow.getHandle(turnId).result()) as TurnResult;
    const r = { ...done, messages: await h.messages(done) };
    expect(r.terminated_by).toBe('cancelled');
    // The conversation stays well-formed for the next turn: every tool call has its result.
    const calls = r.messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).map((c) => c.id) : []));
    const answered = r.messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
    expect(answered).toEqual(calls);
    await idle(sessionId);
    hangOn = undefined;
  });
});

describe('the compression trigger', () => {
  let h: TestHarness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h?.stop();
    if (h?.home) rmSync(h.home, { recursive: true, force: true });
  });

  it('counts CJK text at about a token a character, so a Chinese conversation is compressed before it overflows', async () => {
    const sessionId = newSessionId('cjk');
    const ws = path.join(h.home, 'workspaces', sessionId);
    mkdirSync(ws, { recursive: true });
    // 4,000 Han characters: about 4,000 tokens, which a 4-characters-a-token estimate saw as 1,000.
    const text = '长期记忆与上下文压缩是智能体框架的核心能力。'.repeat(200).slice(0, 4_000);
    writeFileSync(path.join(ws, 'notes.md'), text);
    const script = {
      steps: [{ tool_calls: [{ name: 'read_file', arguments: { path: 'notes.md' } }] }, { content: '读完了。HARNESS_OK' }],
      summaries: ['用户要求阅读 notes.md。'],
    };
    const config = {
      ...scriptedConfig(script, {}, DEFAULT_POLICY),
      compression: { ...DEFAULT_COMPRESSION, contextWindow: 8_000, outputReserve: 1_000, threshold: 0.5, keepTail: 2 },
    };
    const r = await h.finish(sessionId, config, '请阅读 notes.md 并总结。');
    expect(r.terminated_by).toBe('final_answer');
    expect(r.compressions?.length).toBeGreaterThanOrEqual(1);
    expect(r.compressions![0]!.before_tokens).toBeGreaterThan(3_500);

    // The compression is recorded in history as an activity.
    const events = (await h.client.workflow.getHandle(r.turnId).fetchHistory()).events ?? [];
    const compress = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'compressContext');
    expect(compress.length).toBeGreaterThanOrEqual(1);
    const input = defaultPayloadConverter.fromPayload<{ force: boolean }>(compress[0]!.activityTaskScheduledEventAttributes!.input!.payloads![0]!);
    expect(input.force).toBe(true);
  });
});
