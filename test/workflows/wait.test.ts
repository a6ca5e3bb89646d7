/**
 * The `wait` tool: a turn sleeps on a durable timer with no model call, then goes on by itself;
 * or someone wakes it early (HarnessClient.wake) and the model reads who and why. While it
 * sleeps, status says until when and why; events() tells wait_started and wait_ended; bad
 * arguments are a structured error the model reads; a wake with nothing to wake is refused.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectHarness, type HarnessClient, type HarnessEvent } from '../../index';
import type { TurnResult } from '../../deterministic/session';
import type { ChatMessage, ToolResult } from '../../deterministic/types';
import { UserError } from '../../machine/errors';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
let client: HarnessClient;

beforeAll(async () => {
  h = await startHarness();
  const home = mkdtempSync(path.join(os.tmpdir(), 'harness-wait-client-'));
  client = await connectHarness({ env: { TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: home }, taskQueue: h.taskQueue, cwd: home, identity: 'wait-test' });
});
afterAll(async () => {
  await client?.close();
  await h?.stop();
});

const waitCall = (args: Record<string, unknown>) => ({ name: 'wait', arguments: args });

function toolResults(messages: ChatMessage[]): ToolResult[] {
  return messages.filter((m): m is Extract<ChatMessage, { role: 'tool' }> => m.role === 'tool').map((m) => JSON.parse(m.content) as ToolResult);
}

async function collect(events: AsyncIterable<HarnessEvent>): Promise<HarnessEvent[]> {
  const out: HarnessEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe('wait', () => {
  it('sleeps, then goes on by itself without a person and ends with the answer; events tell the wait', async () => {
    const sessionId = newSessionId('wait');
    const config = scriptedConfig({
      steps: [
        { tool_calls: [waitCall({ seconds: 2, reason: 'the build to finish' })] },
        { expect: { last_message_contains: 'on_time' }, content: 'Checked back: the build is done. DONE' },
      ],
    });
    const r = await h.finish(sessionId, config, 'check back on the build in a moment');
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('Checked back: the build is done. DONE');
    expect(r.toolCalls).toEqual([expect.objectContaining({ name: 'wait', ok: true })]);
    // One model call before the wait and one after: none while it slept.
    expect(r.modelCalls).toBe(2);
    const [result] = toolResults(r.messages ?? []);
    expect(result).toMatchObject({ ok: true, result: { woke: 'on_time' } });

    const events = await collect(client.events(sessionId, { turnId: r.turnId }));
    expect(events.map((e) => e.type)).toEqual(['turn_started', 'step', 'tool_call', 'wait_started', 'wait_ended', 'tool_result', 'step', 'model_text', 'final']);
    const started = events.find((e) => e.type === 'wait_started');
    expect(started).toMatchObject({ callId: 't1-s1-c0', reason: 'the build to finish' });
    expect(Date.parse((started as { until: string }).until)).not.toBeNaN();
    expect(events.find((e) => e.type === 'wait_ended')).toMatchObject({ callId: 't1-s1-c0', woken: false });

    const trace = await client.trace(r.turnId);
    const span = trace.spans.map((b) => b.span).find((s) => s.type === 'wait');
    expect(span).toMatchObject({ name: 'wait', status: 'ok', input: { call_id: 't1-s1-c0', reason: 'the build to finish' }, output: { woken: false } });
  });

  it('a long wait shows in status while it sleeps, and wake() ends it early: the model reads who and why', async () => {
    const sessionId = newSessionId('wake');
    const config = scriptedConfig({
      steps: [
        { tool_calls: [waitCall({ seconds: 3600, reason: 'the deploy to roll out' })] },
        { expect: { last_message_contains: 'the deploy is out' }, content: 'Woken: going on. DONE' },
      ],
    });
    h.declareUsed(config);
    const sent = await client.send('deploy, then check back in an hour', { sessionId, config });
    await expect.poll(async () => (await client.status(sessionId)).sleeping, { timeout: 20_000, interval: 100 }).toBeDefined();
    const view = await client.status(sessionId);
    expect(view.status).toBe('running');
    expect(view.sleeping).toMatchObject({ callId: 't1-s1-c0', reason: 'the deploy to roll out' });

    const woken = await client.wake(sessionId, 'the deploy is out');
    expect(woken).toMatchObject({ turnId: sent.turnId, sleeping: { callId: 't1-s1-c0', until: view.sleeping!.until } });
    const r = (await h.client.workflow.getHandle(sent.turnId).result()) as TurnResult;
    expect(r.answer).toBe('Woken: going on. DONE');
    const [result] = toolResults(await h.messages(r));
    expect(result).toMatchObject({ ok: true, result: { woke: 'early', planned_until: view.sleeping!.until, wake_reason: 'the deploy is out', woken_by: 'wait-test' } });
    await expect.poll(async () => (await client.status(sessionId)).status, { timeout: 10_000, interval: 100 }).toBe('idle');
    expect((await client.status(sessionId)).sleeping).toBeUndefined();

    const events = await collect(sent.events());
    expect(events.map((e) => e.type)).toEqual(['turn_started', 'step', 'tool_call', 'wait_started', 'wait_ended', 'tool_result', 'step', 'model_text', 'final']);
    expect(events.find((e) => e.type === 'wait_ended')).toMatchObject({ woken: true, by: 'wait-test', reason: 'the deploy is out' });
  });

  it('a turn cancelled while it sleeps ends cancelled at once, and its session forgets the sleep', async () => {
    const sessionId = newSessionId('wait-cancel');
    const config = scriptedConfig({ steps: [{ tool_calls: [waitCall({ seconds: 3600, reason: 'nothing in particular' })] }, { content: 'never reached' }] });
    h.declareUsed(config);
    const sent = await client.send('sleep for an hour', { sessionId, config });
    await expect.poll(async () => (await client.status(sessionId)).sleeping, { timeout: 20_000, interval: 100 }).toBeDefined();
    const out = await client.cancel(sent.turnId);
    expect(out).toMatchObject({ kind: 'turn', terminatedBy: 'cancelled' });
    await expect.poll(async () => (await client.status(sessionId)).status, { timeout: 10_000, interval: 100 }).toBe('idle');
    expect((await client.status(sessionId)).sleeping).toBeUndefined();
    const events = await collect(sent.events());
    expect(events.map((e) => e.type)).toEqual(['turn_started', 'step', 'tool_call', 'wait_started', 'tool_result', 'final']);
    const span = (await client.trace(sent.turnId)).spans.map((b) => b.span).find((x) => x.type === 'wait');
    expect(span).toMatchObject({ status: 'error', error: 'the turn ended while it slept' });
  });

  it('bad arguments are a structured error the model reads, naming the bound; nothing sleeps', async () => {
    const sessionId = newSessionId('wait-bad');
    const calls = [
      waitCall({ seconds: 5, until: '2030-01-01T00:00:00Z', reason: 'both' }),
      waitCall({ reason: 'neither' }),
      waitCall({ until: '2001-01-01T00:00:00Z', reason: 'the past' }),
      waitCall({ until: 'next tuesday', reason: 'unparsable' }),
      waitCall({ until: '2030-01-01T09:00:00', reason: 'no zone' }),
      waitCall({ seconds: 0, reason: 'zero' }),
      waitCall({ seconds: 11, reason: 'past the bound' }),
      waitCall({ seconds: 1, reason: '' }),
    ];
    const config = scriptedConfig({ steps: [{ tool_calls: calls }, { content: 'Gave up waiting. DONE' }] }, { maxWaitMs: 10_000 });
    const r = await h.finish(sessionId, config, 'wait wrongly');
    expect(r.answer).toBe('Gave up waiting. DONE');
    const results = toolResults(r.messages ?? []);
    expect(results).toHaveLength(calls.length);
    for (const x of results) expect(x).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
    const messages = results.map((x) => x.message);
    expect(messages[0]).toContain('not both');
    expect(messages[1]).toContain('give seconds');
    expect(messages[2]).toContain('not in the future');
    expect(messages[3]).toContain('ISO 8601');
    expect(messages[4]).toContain('ISO 8601');
    expect(messages[5]).toContain('positive');
    expect(messages[6]).toContain('at most 10 seconds (limits.maxWaitSec)');
    expect(messages[7]).toContain('reason');
    const trace = await client.trace(r.turnId);
    expect(trace.spans.filter((b) => b.span.type === 'wait')).toEqual([]);
  });

  it('waking a session that is not sleeping, or no session, is a one-line error', async () => {
    const sessionId = newSessionId('wake-idle');
    await h.finish(sessionId, scriptedConfig({ steps: [{ content: 'Nothing to wait for. DONE' }] }), 'hello');
    await expect.poll(async () => (await client.status(sessionId)).status, { timeout: 10_000, interval: 100 }).toBe('idle');
    const err = await client.wake(sessionId).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).message).toBe(`session ${sessionId} is not sleeping (status: idle)`);
    expect((err as UserError).hint).toContain(`harness status ${sessionId}`);

    const missing = await client.wake('no-such-session-wake').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(UserError);
    expect((missing as UserError).message).toBe('no session named no-such-session-wake');
  });
});
