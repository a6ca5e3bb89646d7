/**
 * What a custom tool gets from the session beyond its arguments, end to end through the public
 * API: the metadata the application set when it started the session (`ctx.metadata`: never in
 * what the model receives, kept across continue-as-new), and an error type of its own in a
 * ToolError reaching the result and the trace. Metadata that is too big or not JSON is refused
 * before anything starts.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { connectHarness, createHarnessWorker, defineTool, ToolError, UsageError, type HarnessClient, type HarnessWorker, type JsonValue } from '../../index';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import { quietRuntime } from '../support/quiet-runtime';
import { TEST_DATABASE_URL } from '../support/harness';

const USER = `user-${randomUUID()}`;
const TENANT = `tenant-${randomUUID()}`;
const seen: Array<Readonly<Record<string, JsonValue>>> = [];

const whoami = defineTool({
  name: 'whoami',
  description: 'Say whether the current user is known.',
  schema: z.object({}),
  risk: 'read_only',
  idempotent: true,
  run: async (_args, ctx) => {
    seen.push(ctx.metadata);
    return { known: typeof ctx.metadata.userId === 'string' };
  },
});

const charge = defineTool({
  name: 'charge_card',
  description: 'Charge the card on file.',
  schema: z.object({ cents: z.number().int().positive(), type: z.string().optional() }),
  risk: 'read_only',
  idempotent: true,
  run: async ({ cents, type }) => {
    throw new ToolError(`the card was declined for ${cents} cents`, { type: type ?? 'PAYMENT_DECLINED', suggestion: 'ask for another card', recoverable: false });
  },
});

let server: ScriptedModelServer;
let worker: { w: HarnessWorker; running: Promise<void> };
let client: HarnessClient;
const queue = `api-ctx-${randomUUID()}`;
const tmp = (prefix: string) => mkdtempSync(path.join(os.tmpdir(), prefix));
const cwd = tmp('harness-api-ctx-cwd-');

beforeAll(async () => {
  quietRuntime();
  server = await startScriptedModel();
  const env = { PATH: process.env.PATH, TEMPORAL_ADDRESS: inject('temporalAddress'), DATABASE_URL: TEST_DATABASE_URL };
  const w = await createHarnessWorker({
    tools: [whoami, charge],
    env: { ...env, OPENAI_API_KEY: 'test-key' },
    modelEndpoints: [server.url],
    taskQueue: queue,
    home: tmp('harness-api-ctx-home-'),
    log: () => undefined,
    bundlePath: inject('workflowBundle'),
  });
  worker = { w, running: w.run() };
  client = await connectHarness({ env: { ...env, OPENAI_BASE_URL: server.url }, taskQueue: queue, cwd });
});

afterAll(async () => {
  worker?.w.shutdown();
  await worker?.running.catch(() => undefined);
  await client?.close();
  await server?.close();
});

const call = (name: string, args: Record<string, unknown> = {}) => ({ tool_calls: [{ name, arguments: args }] });

describe('session metadata', () => {
  it('reaches custom tools as ctx.metadata, never the model, and stays across continue-as-new', async () => {
    const sessionId = `meta-${randomUUID()}`;
    server.registerScript(sessionId, {
      steps: [
        { ...call('whoami'), expect: { tools_include: 'whoami' } },
        { content: 'You are known. DONE' },
        call('whoami'),
        { content: 'Still known. DONE' },
      ],
    });
    // A session that continues as new after its first turn: the second turn runs in a new run.
    const configFile = path.join(cwd, `short-runs-${randomUUID()}.json`);
    writeFileSync(configFile, JSON.stringify({ limits: { continueAsNewAfterEvents: 10 } }));
    const metadata = { userId: USER, tenant: TENANT, plan: { tier: 'gold', seats: 3 } };
    const first = await client.run('who am I?', { sessionId, model: 'test-model', policy: 'auto', configFile, metadata });
    expect(first.kind).toBe('done');
    if (first.kind !== 'done') return;
    expect(first.result.toolCalls.map((c) => [c.name, c.ok])).toEqual([['whoami', true]]);

    const second = await client.run('and now?', { sessionId });
    expect(second.kind).toBe('done');
    // The second turn is a child of the session's next run.
    const parentRun = async (turnId: string) => (await client.temporal.workflow.getHandle(turnId).describe()).parentExecution?.runId;
    expect(await parentRun(second.turnId)).not.toBe(await parentRun(first.turnId));

    expect(seen).toEqual([metadata, metadata]);
    // What the model received: every request of the session, whole.
    const sent = server.requests.filter((r) => r.session === sessionId);
    expect(sent.length).toBe(4);
    const bodies = JSON.stringify(sent.map((r) => r.body));
    expect(bodies).toContain('You are known'); // the conversation is there …
    for (const secret of [USER, TENANT, 'gold']) expect(bodies).not.toContain(secret); // … the metadata is not
  }, 90_000);

  it('too big, or not JSON: one usage error, and no session is started', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ blob: 'x'.repeat(17 * 1024) }, /^metadata is \d+ bytes of JSON; at most 16 KiB is accepted$/],
      [{ when: new Date(0) }, /^metadata\.when is a Date, which is not JSON/],
      [{ n: Number.NaN }, /^metadata\.n is NaN, which JSON cannot hold$/],
      [{ f: () => 1 }, /^metadata\.f is a function, which is not JSON$/],
      [['a'], /^metadata must be a plain JSON object \(it is an array\)$/],
    ];
    for (const [metadata, message] of cases) {
      const sessionId = `meta-bad-${randomUUID()}`;
      const err = await client.send('hello', { sessionId, model: 'test-model', metadata: metadata as Record<string, JsonValue> }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(UsageError);
      expect((err as UsageError).message).toMatch(message);
      expect((err as UsageError).message).not.toContain('\n');
      await expect(client.temporal.workflow.getHandle(sessionId).describe()).rejects.toThrow(/not found/i);
    }
  }, 30_000);
});

describe('a ToolError with an error type of its own', () => {
  it('gives the model error_type PAYMENT_DECLINED, and the trace says so', async () => {
    const sessionId = `declined-${randomUUID()}`;
    server.registerScript(sessionId, {
      steps: [call('charge_card', { cents: 500 }), { expect: { last_message_contains: 'PAYMENT_DECLINED' }, content: 'Declined. DONE' }],
    });
    const out = await client.run('charge me', { sessionId, model: 'test-model', policy: 'auto' });
    expect(out.kind).toBe('done');
    if (out.kind !== 'done') return;
    expect(out.result.toolCalls.map((c) => [c.name, c.ok, c.error_type])).toEqual([['charge_card', false, 'PAYMENT_DECLINED']]);
    const toolMessage = server.requests.filter((r) => r.session === sessionId)[1]!.body as { messages: Array<{ role: string; content: string }> };
    expect(JSON.parse(toolMessage.messages.at(-1)!.content)).toEqual({
      ok: false,
      error_type: 'PAYMENT_DECLINED',
      message: 'the card was declined for 500 cents',
      recoverable: false,
      suggestion: 'ask for another card',
    });

    const trace = await client.trace(out.turnId);
    const span = trace.spans.map((s) => s.span).find((s) => s.type === 'tool_call' && s.name === 'charge_card')!;
    expect(span.status).toBe('error');
    expect(span.output).toMatchObject({ ok: false, error_type: 'PAYMENT_DECLINED' });
    expect(span.error).toContain('PAYMENT_DECLINED');
  }, 60_000);

  it('falls back to EXECUTION_ERROR, saying why, for a type that is not UPPER_SNAKE', async () => {
    const sessionId = `declined-bad-${randomUUID()}`;
    server.registerScript(sessionId, { steps: [call('charge_card', { cents: 7, type: 'payment declined' }), { content: 'Failed. DONE' }] });
    const out = await client.run('charge me', { sessionId, model: 'test-model', policy: 'auto' });
    expect(out.kind).toBe('done');
    if (out.kind !== 'done') return;
    expect(out.result.toolCalls.map((c) => [c.ok, c.error_type])).toEqual([[false, 'EXECUTION_ERROR']]);
    const body = server.requests.filter((r) => r.session === sessionId)[1]!.body as { messages: Array<{ content: string }> };
    expect(JSON.parse(body.messages.at(-1)!.content).message).toBe(
      'the card was declined for 7 cents (the tool gave the error type "payment declined", which is not UPPER_SNAKE_CASE (A-Z, 0-9 and _, a letter first, at most 64 characters), so it is reported as EXECUTION_ERROR)',
    );
  }, 60_000);
});
