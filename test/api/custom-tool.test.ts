/**
 * The public API end to end, in process: a tool defined with defineTool, run by
 * createHarnessWorker on the test dev server, driven by connectHarness under the default policy
 * (mode ask): the call is asked about, approved, run once, and its result is in the trace. A
 * session whose worker lacks a tool it needs says so clearly, never runs something else.
 */
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { connectHarness, createHarnessWorker, defineTool, ToolError, type HarnessClient, type HarnessWorker } from '../../index';
import { quietRuntime } from '../support/quiet-runtime';
import { TEST_DATABASE_URL } from '../support/harness';

const SECRET = `token-${randomUUID()}`;
const seen: { secrets?: Record<string, string>; workspace?: string } = {};

const recordOrder = defineTool({
  name: 'record_order',
  description: 'Record an order for an item. Returns the order id.',
  schema: z.object({ item: z.string().min(1), qty: z.number().int().positive() }),
  risk: 'write',
  timeoutSec: 20,
  run: async ({ item, qty }, ctx) => {
    seen.secrets = { ...ctx.secrets };
    seen.workspace = ctx.workspace;
    ctx.heartbeat({ item });
    ctx.log.info('recording', { item, qty });
    if (item === 'nothing') throw new ToolError('there is no such item', { suggestion: 'order something that exists' });
    appendFileSync(path.join(ctx.workspace, 'orders.txt'), `${item} x${qty}\n`);
    return { id: 'ord-1', item, qty };
  },
});

const dirs: string[] = [];
const tmp = (prefix: string) => {
  const d = mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const env = () => ({ PATH: process.env.PATH, TEMPORAL_ADDRESS: inject('temporalAddress'), DATABASE_URL: TEST_DATABASE_URL });
const script = (steps: unknown[]) => {
  const file = path.join(tmp('harness-api-script-'), 'script.json');
  writeFileSync(file, JSON.stringify({ steps }));
  return `scripted:${file}`;
};

const workers: Array<{ w: HarnessWorker; running: Promise<void> }> = [];
async function startWorker(taskQueue: string, home: string, tools = [recordOrder]): Promise<{ w: HarnessWorker; running: Promise<void> }> {
  const w = await createHarnessWorker({ tools, secrets: tools.length ? { record_order: { ORDERS_TOKEN: SECRET } } : {}, env: env(), taskQueue, home, log: () => undefined, bundlePath: inject('workflowBundle') });
  const entry = { w, running: w.run() };
  workers.push(entry);
  return entry;
}

let client: HarnessClient;
const queue = `api-${randomUUID()}`;
const home = tmp('harness-api-home-');

beforeAll(async () => {
  quietRuntime();
  await startWorker(queue, home);
  client = await connectHarness({ env: env(), taskQueue: queue, identity: 'api-test@here', cwd: tmp('harness-api-cwd-') });
});

afterAll(async () => {
  for (const { w, running } of workers) {
    w.shutdown();
    await running.catch(() => undefined);
  }
  await client?.close();
});

describe('a custom tool through a real turn', () => {
  it('is asked about under the default policy, approved, run once, and its result is in the trace', async () => {
    const model = script([
      { expect: { tools_include: 'record_order' }, tool_calls: [{ name: 'record_order', arguments: { item: 'tea', qty: 2 } }] },
      { expect: { last_message_contains: 'ord-1' }, content: 'Ordered tea. DONE' },
    ]);
    const first = await client.run('order two teas', { model });
    expect(first.kind).toBe('waiting');
    if (first.kind !== 'waiting') return;
    const pending = first.state.pending;
    expect(pending?.kind).toBe('approvals');
    if (pending?.kind !== 'approvals') return;
    expect(pending.calls.map((c) => [c.tool, c.risk, c.args])).toEqual([['record_order', 'write', { item: 'tea', qty: 2 }]]);

    const decided = await client.approve(first.sessionId);
    expect(decided.calls.map((c) => c.tool)).toEqual(['record_order']);
    const done = await client.wait(decided.turnId);
    expect(done.kind).toBe('done');
    if (done.kind !== 'done') return;
    expect(done.result.answer).toContain('DONE');
    expect(done.result.toolCalls.map((c) => [c.name, c.ok, c.policy?.decision, c.approval?.approved])).toEqual([['record_order', true, 'ask', true]]);

    // Run once, in the session's workspace, with exactly the secrets given to this tool.
    expect(readFileSync(path.join(home, 'workspaces', first.sessionId, 'orders.txt'), 'utf8')).toBe('tea x2\n');
    expect(seen.workspace).toBe(path.join(home, 'workspaces', first.sessionId));
    expect(seen.secrets).toEqual({ ORDERS_TOKEN: SECRET });

    const trace = await client.trace(first.turnId);
    const call = trace.spans.map((s) => s.span).find((s) => s.type === 'tool_call' && s.name === 'record_order')!;
    expect(call.status).toBe('ok');
    expect(call.source).toBe('custom');
    expect(call.input).toMatchObject({ args: { item: 'tea', qty: 2 }, policy: { decision: 'ask' } });
    expect(call.output).toMatchObject({ ok: true, result: { id: 'ord-1', item: 'tea', qty: 2 }, execution: { kind: 'activity' } });
    const approval = trace.spans.map((s) => s.span).find((s) => s.type === 'approval' && s.parent_id === call.span_id)!;
    expect(approval.output).toMatchObject({ approved: true, by: 'api-test@here' });

    // The secret stays on the worker: not in the session's or the turn's history.
    for (const id of [first.sessionId, first.turnId]) {
      const history = await client.temporal.workflow.getHandle(id).fetchHistory();
      expect(JSON.stringify(history)).not.toContain(SECRET);
    }
    const status = await client.status(first.sessionId);
    expect(status.lastTurn?.terminated_by).toBe('final_answer');
  }, 90_000);

  it('gives the model a ToolError as a structured result', async () => {
    const model = script([
      { tool_calls: [{ name: 'record_order', arguments: { item: 'nothing', qty: 1 } }] },
      { expect: { last_message_contains: 'there is no such item' }, content: 'No such item. DONE' },
    ]);
    const out = await client.run('order nothing', { model, policy: 'auto' });
    expect(out.kind).toBe('done');
    if (out.kind !== 'done') return;
    expect(out.result.toolCalls.map((c) => [c.ok, c.error_type])).toEqual([[false, 'EXECUTION_ERROR']]);
  }, 60_000);
});

describe('a session whose worker lacks a tool it needs', () => {
  it('fails its first turn naming the tool, the worker and what to do, when started against a worker without it', async () => {
    const bare = `api-bare-${randomUUID()}`;
    await startWorker(bare, tmp('harness-api-bare-'), []);
    const h = await connectHarness({ env: env(), taskQueue: bare, cwd: tmp('harness-api-cwd-') });
    try {
      const out = await h.run('order tea', { model: script([{ content: 'never asked' }]), requireTools: ['record_order'] });
      expect(out.kind).toBe('done');
      if (out.kind !== 'done') return;
      expect(out.result.terminated_by).toBe('failed');
      expect(out.result.error).toMatch(/needs the tool\(s\) record_order, which the worker that prepared its first turn \(.*task queue api-bare-.*\) does not have \(it has no custom tools\); start a worker with createHarnessWorker/);
    } finally {
      await h.close();
    }
  }, 60_000);

  it('answers a call of a recorded tool on a worker without it with TOOL_UNAVAILABLE, never another run', async () => {
    const q = `api-swap-${randomUUID()}`;
    const h = tmp('harness-api-swap-');
    const withTool = await startWorker(q, h);
    const c = await connectHarness({ env: env(), taskQueue: q, cwd: tmp('harness-api-cwd-') });
    try {
      const model = script([
        { content: 'hello' },
        { expect: { tools_include: 'record_order' }, tool_calls: [{ name: 'record_order', arguments: { item: 'tea', qty: 1 } }] },
        { expect: { last_message_contains: 'TOOL_UNAVAILABLE' }, content: 'The order tool is not available. DONE' },
      ]);
      const first = await c.run('hi', { model, policy: 'auto' });
      expect(first.kind).toBe('done');
      // The worker with the tool goes; one without it takes the task queue over.
      withTool.w.shutdown();
      await withTool.running;
      await startWorker(q, h, []);
      const second = await c.run('order tea', { sessionId: first.sessionId });
      expect(second.kind).toBe('done');
      if (second.kind !== 'done') return;
      expect(second.result.answer).toContain('DONE');
      expect(second.result.toolCalls.map((t) => [t.name, t.ok, t.error_type])).toEqual([['record_order', false, 'TOOL_UNAVAILABLE']]);
      const trace = await c.trace(second.turnId);
      const span = trace.spans.map((s) => s.span).find((s) => s.type === 'tool_call')!;
      expect(String(span.output?.message)).toMatch(/The tool record_order is not on the worker that took this call .*started without it/);
      expect(() => readFileSync(path.join(h, 'workspaces', first.sessionId, 'orders.txt'))).toThrow();
    } finally {
      await c.close();
    }
  }, 90_000);
});

describe('defineTool', () => {
  it('refuses a malformed definition, naming the tool and the field', () => {
    const base = { description: 'Does a thing for the test.', schema: z.object({}), risk: 'read_only' as const, run: () => 1 };
    expect(() => defineTool({ ...base, name: 'read_file' })).toThrow(/tool "read_file": that is the name of a built-in tool/);
    expect(() => defineTool({ ...base, name: 'mcp__x__y' })).toThrow(/belong to MCP servers/);
    expect(() => defineTool({ ...base, name: '9lives' })).toThrow(/name must match/);
    expect(() => defineTool({ ...base, name: 'ok_name', risk: 'safe' as never })).toThrow(/risk must be one of/);
    expect(() => defineTool({ ...base, name: 'ok_name', timeoutSec: 0 })).toThrow(/timeoutSec/);
    expect(() => defineTool({ ...base, name: 'ok_name', schema: z.string() as never })).toThrow(/zod object schema/);
    expect(() => defineTool({ ...base, name: 'ok_name', schema: z.object({ when: z.date() }) })).toThrow(/cannot be expressed as JSON schema/);
    const t = defineTool({ ...base, name: 'ok_name', schema: z.object({ n: z.number().int().describe('a count') }) });
    expect(t.spec).toEqual({
      name: 'ok_name',
      description: base.description,
      parameters: { type: 'object', properties: { n: { type: 'integer', description: 'a count', minimum: expect.any(Number), maximum: expect.any(Number) } }, required: ['n'] },
      risk: 'read_only',
      timeoutMs: 30_000,
      idempotent: false,
    });
  });
});
