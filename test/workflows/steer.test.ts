/**
 * Steering: a message sent while a turn runs is queued for its next step (default), interrupts
 * its current step's calls (`interrupt`), or is refused (`reject`); a message queued while the
 * model gives its final answer makes the turn go on. Real Temporal; the model is scripted, or an
 * endpoint of the test's own that holds a reply until the test lets it go.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectHarness, type HarnessClient, type HarnessEvent } from '../../index';
import { UserError } from '../../machine/errors';
import { answerQuestion, sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { turnStateQuery } from '../../deterministic/messages';
import { renderTrace } from '../../history/trace/render';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { ALLOW_ALL, endpointConfig, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
let client: HarnessClient;
beforeAll(async () => {
  h = await startHarness();
  const home = mkdtempSync(path.join(os.tmpdir(), 'harness-steer-client-'));
  client = await connectHarness({ env: { TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: home }, taskQueue: h.taskQueue, cwd: home, identity: 'steer-test' });
});
afterAll(async () => {
  await client?.close();
  await h?.stop();
});

async function collect(events: AsyncIterable<HarnessEvent>): Promise<HarnessEvent[]> {
  const out: HarnessEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

async function waiting(sessionId: string): Promise<void> {
  await expect.poll(async () => (await sessionState(h.client, sessionId)).status, { timeout: 20_000, interval: 50 }).toBe('waiting_for_user');
}

async function finished(turnId: string) {
  const out = await waitForTurn(h.client, turnId, { timeoutMs: 60_000 });
  if (out.kind !== 'done') throw new Error(`turn ${turnId} is waiting: ${JSON.stringify(out)}`);
  return h.complete(out.result);
}

describe('steering a running turn', () => {
  it('queues a message for the next step (HarnessClient.send): the next model request has it, after the step that ran; events tell it', async () => {
    const sessionId = newSessionId('steer');
    const config = scriptedConfig({
      steps: [
        { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which branch?' } }] },
        { expect: { messages_contain: 'also run the linter' }, content: 'main, and the linter too. HARNESS_OK' },
      ],
    });
    const out = await h.turn(sessionId, config, 'deploy');
    expect(out.kind).toBe('waiting');
    const sent = await client.send('also run the linter', { sessionId, whileRunning: 'queue' });
    expect(sent).toMatchObject({ sessionId, turn: 1, turnId: `${sessionId}/turn-1`, steered: 'queue' });
    const turnState = await h.client.workflow.getHandle(sent.turnId).query(turnStateQuery);
    expect(turnState.queued).toBe(1);
    await answerQuestion(h.client, sessionId, 'main');
    const r = await finished(sent.turnId);
    expect(r.answer).toBe('main, and the linter too. HARNESS_OK');
    const texts = (await h.messages(r)).filter((m) => m.role === 'user').map((m) => String(m.content));
    expect(texts).toContain('also run the linter');
    // The steered message comes after the answered question, before the final reply.
    const all = await h.messages(r);
    const at = all.findIndex((m) => m.role === 'user' && m.content === 'also run the linter');
    expect(all.slice(0, at).some((m) => m.role === 'tool')).toBe(true);
    const events = await collect(client.events(sessionId, { turnId: sent.turnId }));
    expect(events.filter((e) => e.type === 'steered')).toEqual([expect.objectContaining({ type: 'steered', text: 'also run the linter', mode: 'queue' })]);
    // Told where the signal is in history: after the question, before the step that reads it.
    const types = events.map((e) => e.type);
    expect(types.indexOf('steered')).toBeGreaterThan(types.indexOf('question_asked'));
    expect(types.indexOf('steered')).toBeLessThan(types.lastIndexOf('step'));
    // The trace says it too, as a line of its own before the step that read it.
    const trace = await client.trace(sent.turnId);
    const spans = trace.spans.map((b) => b.span);
    const order = spans.filter((x) => x.parent_id === spans[0]!.span_id).map((x) => x.name);
    expect(order).toEqual(['step 1', 'message', 'step 2']);
    expect(spans.find((x) => x.type === 'message')).toMatchObject({ status: 'ok', input: { text: 'also run the linter', mode: 'queue' } });
    expect(renderTrace(trace, { full: false, color: false, escape: escapeForTerminal })).toContain('message sent while it ran "also run the linter" → queued for the next step');
  });

  it('interrupts a long tool call: the call is cancelled and the turn goes on with the message', async () => {
    const sessionId = newSessionId('steer');
    // ALLOW_ALL: the sleep must run unattended for the interrupt to meet it running.
    const config = scriptedConfig(
      {
        steps: [
          { tool_calls: [{ name: 'run_shell', arguments: { command: 'sleep 300', timeout_ms: 600_000 } }] },
          { expect: { messages_contain: 'stop, just say hi' }, content: 'hi. HARNESS_OK' },
        ],
      },
      {},
      ALLOW_ALL,
    );
    h.declareUsed(config);
    const first = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'wait a while' });
    const turn = h.client.workflow.getHandle(first.turnId);
    await expect.poll(async () => (await turn.describe()).raw.pendingActivities?.length ?? 0, { timeout: 30_000, interval: 100 }).toBeGreaterThan(0);
    const sent = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, text: 'stop, just say hi', whileRunning: 'interrupt' });
    expect(sent.steered).toBe('interrupt');
    const r = await finished(first.turnId);
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('hi. HARNESS_OK');
    expect(r.toolCalls).toHaveLength(1);
    expect(r.toolCalls[0]!.error_type).toBe('EXECUTION_ERROR');
    const tool = (await h.messages(r)).find((m) => m.role === 'tool');
    expect(String(tool?.content)).toMatch(/cancel/i);
    const trace = await client.trace(first.turnId);
    expect(trace.spans.filter((b) => b.span.type === 'message').map((b) => b.span.input)).toEqual([{ text: 'stop, just say hi', mode: 'interrupt' }]);
  });

  it('interrupts under the default policy: a long wait is cancelled and the turn goes on with the message', async () => {
    const sessionId = newSessionId('steer');
    // wait is read-only, so the default policy lets it run unasked: nothing here switches the policy.
    const config = scriptedConfig({
      steps: [
        { tool_calls: [{ name: 'wait', arguments: { seconds: 3600, reason: 'let the build finish' } }] },
        { expect: { messages_contain: 'no need to wait' }, content: 'hi. HARNESS_OK' },
      ],
    });
    const first = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'wait for the build' });
    const turn = h.client.workflow.getHandle(first.turnId);
    await expect.poll(async () => (await turn.query(turnStateQuery)).sleeping?.reason, { timeout: 30_000, interval: 100 }).toBe('let the build finish');
    const sent = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, text: 'no need to wait', whileRunning: 'interrupt' });
    expect(sent.steered).toBe('interrupt');
    const r = await finished(first.turnId);
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('hi. HARNESS_OK');
    expect(r.toolCalls.map((c) => c.name)).toEqual(['wait']);
    const tool = (await h.messages(r)).find((m) => m.role === 'tool');
    expect(String(tool?.content)).toMatch(/cancel/i);
  });

  it('refuses a message sent with reject while a turn runs, with the one-line error of before', async () => {
    const sessionId = newSessionId('steer');
    const config = scriptedConfig({ steps: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which branch?' } }] }, { content: 'never' }] });
    expect((await h.turn(sessionId, config, 'deploy')).kind).toBe('waiting');
    const err = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, text: 'hurry', whileRunning: 'reject' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as Error).message).toMatch(/a turn is already running \(.*\/turn-1\)/);
    expect((err as Error).message).not.toContain('\n');
    const bad = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, text: 'hurry', whileRunning: 'later' as never }).catch((e: unknown) => e);
    expect((bad as Error).message).toMatch(/whileRunning must be one of queue, interrupt, reject/);
    await waiting(sessionId);
    await h.client.workflow.getHandle(sessionId).terminate('test cleanup');
  });

  it('goes on past a final answer when a message was queued while the model answered', async () => {
    const endpoint = await heldEndpoint();
    try {
      const sessionId = newSessionId('steer');
      // Model calls as activities (modelLocalMs 0): the message arrives while the held call runs.
      const config = endpointConfig(endpoint.url, { modelLocalMs: 0 });
      h.declareUsed(config);
      const first = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'summarise' });
      await expect.poll(() => endpoint.requests.length, { timeout: 30_000, interval: 50 }).toBeGreaterThan(0);
      const sent = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, text: 'in French please' });
      expect(sent).toMatchObject({ turnId: first.turnId, steered: 'queue' });
      endpoint.release();
      const r = await finished(first.turnId);
      expect(r.answer).toBe('Résumé. HARNESS_OK');
      expect(r.steps).toBe(2);
      expect(endpoint.requests).toHaveLength(2);
      expect(JSON.stringify(endpoint.requests[0])).not.toContain('in French please');
      // The final answer stays in the conversation; the message follows it.
      expect(endpoint.requests[1]!.slice(-2)).toMatchObject([
        { role: 'assistant', content: 'Summary.' },
        { role: 'user', content: 'in French please' },
      ]);
    } finally {
      await endpoint.close();
    }
  });
});

/** An OpenAI-compatible endpoint: the first reply ("Summary.") is held until release(), the second is "Résumé. HARNESS_OK". */
async function heldEndpoint() {
  const requests: Array<Array<{ role: string; content: unknown }>> = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { messages: Array<{ role: string; content: unknown }>; tools?: Array<{ function: { name: string } }> };
      if (req.headers['x-harness-purpose'] === 'probe') {
        const tool = body.tools?.[0]?.function.name;
        return reply(res, tool ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: tool, arguments: '{}' } }] } : { role: 'assistant', content: 'noon' });
      }
      requests.push(body.messages);
      if (requests.length === 1) void gate.then(() => reply(res, { role: 'assistant', content: 'Summary.' }));
      else reply(res, { role: 'assistant', content: 'Résumé. HARNESS_OK' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    release: () => release(),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function reply(res: ServerResponse, message: Record<string, unknown>): void {
  const finish = message.tool_calls ? 'tool_calls' : 'stop';
  const body = { id: 'x', object: 'chat.completion', created: 0, model: 'held', choices: [{ index: 0, finish_reason: finish, message }], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } };
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
