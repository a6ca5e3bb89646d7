/**
 * Structured output through real turns (dev server, worker, scripted model): a session started
 * with `output` (by the client's run, or as an agent defined with one) is told the shape in its
 * system prompt, and its turn ends with the validated object in `result.output`. An answer that
 * does not match goes back to the model with what is wrong (its next request says so), the turn
 * goes on, and past limits.outputRetries it fails with OUTPUT_INVALID — in native and in text
 * tool-calling mode, and never as a failed workflow task. `finish` is offered with the output's
 * JSON schema as its parameters, and the object it is given is the answer.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { z } from 'zod';
import { HarnessClient } from '../../api/client';
import { defineAgent } from '../../api/define-agent';
import { outputSpecOf } from '../../api/output';
import { OUTPUT_INVALID, type OutputSpec } from '../../deterministic/output';
import type { TurnResult } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import type { Script } from '../../scripted-model/script';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import { DEFAULT_POLICY, endpointConfig, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { taskFailures, watchedTurn } from '../support/watched-turn';
import { replayHistory } from '../../history/replay/replay';

const Order = z.object({
  id: z.string().regex(/^A-\d+$/),
  total: z.number().min(0),
  status: z.enum(['open', 'shipped']),
});
const spec = outputSpecOf(Order) as OutputSpec;
const valid = { id: 'A-7', total: 12.5, status: 'shipped' };
const RETRY_NOTE = 'Your final answer was not accepted';

let h: TestHarness;
let server: ScriptedModelServer;
let client: HarnessClient;
const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-output-'));

beforeAll(async () => {
  [h, server] = await Promise.all([startHarness(), startScriptedModel()]);
  client = new HarnessClient(h.client, { taskQueue: h.taskQueue, env: {}, cwd: dir });
});
afterAll(async () => {
  await h?.stop();
  await server?.close();
});

/** A script file in the test's folder, for `model: scripted:<file>`. */
function scriptFile(script: Script): string {
  const file = path.join(dir, `${newSessionId('script')}.json`);
  writeFileSync(file, JSON.stringify(script));
  return `scripted:${file}`;
}

/** The result of a done turn whose session's workflows never failed a task. */
async function done<O>(out: { kind: string; sessionId: string; turnId: string; result?: TurnResult<O> }): Promise<TurnResult<O>> {
  expect(out.kind).toBe('done');
  expect([...(await taskFailures(h.client, out.turnId)), ...(await taskFailures(h.client, out.sessionId))]).toEqual([]);
  return out.result!;
}

/** The parameters of the finish each request of the session offered (native tool calling). */
function offeredFinish(sessionId: string): unknown[] {
  return server.requests
    .filter((q) => q.session === sessionId)
    .map((q) => ((q.body as { tools?: Array<{ function: { name: string; parameters: unknown } }> }).tools ?? []).find((t) => t.function.name === 'finish')?.function.parameters);
}

/** The session's turn, its history replayed against the current code. */
async function replays(turnId: string): Promise<void> {
  const history = await h.client.workflow.getHandle(turnId).fetchHistory();
  expect(await replayHistory(history, turnId, inject('workflowBundle'))).toEqual({ ok: true });
}

describe('structured output through finish', () => {
  it("offers finish with the output's JSON schema as parameters on every call, and ends with the object it is given", async () => {
    const sessionId = newSessionId('out-finish');
    server.registerScript(sessionId, {
      steps: [{ tool_calls: [{ name: 'get_current_time', arguments: {} }] }, { expect: { system_contains: 'the arguments you give `finish`' }, tool_calls: [{ name: 'finish', arguments: valid }] }],
    });
    const r = await watchedTurn(h, sessionId, { ...endpointConfig(server.url, {}, DEFAULT_POLICY), output: spec }, 'What time is it, and where is order A-7?');
    expect([r.terminated_by, r.steps, r.error]).toEqual(['finish', 2, undefined]);
    expect(r.output).toEqual(valid);
    expect(JSON.parse(r.answer)).toEqual(valid);
    // The second call named the schema by its hash: the worker read it back from the store.
    expect(offeredFinish(sessionId)).toEqual([spec.schema, spec.schema]);
    await replays(r.turnId);
  }, 60_000);

  it('sends an object that does not match back with what is wrong, and ends with the next that does', async () => {
    const sessionId = newSessionId('out-finish-retry');
    server.registerScript(sessionId, {
      steps: [
        { tool_calls: [{ name: 'finish', arguments: { ...valid, id: 'B-7', status: 'lost' } }] },
        { expect: { last_message_contains: RETRY_NOTE }, tool_calls: [{ name: 'finish', arguments: valid }] },
      ],
    });
    const r = await watchedTurn(h, sessionId, { ...endpointConfig(server.url, {}, DEFAULT_POLICY), output: spec }, 'Where is order A-7?');
    expect([r.terminated_by, r.steps, r.modelCalls]).toEqual(['finish', 2, 2]);
    expect(r.output).toEqual(valid);
    const note = (await h.messages(r)).find((m) => m.role === 'user' && m.content.includes(RETRY_NOTE));
    expect(note?.content).toContain('(attempt 1 of 3)');
    expect(note?.content).toContain('status: Invalid option');
    expect(r.toolCalls?.map((c) => [c.name, c.ok])).toEqual([['finish', true], ['finish', true]]);
    await replays(r.turnId);
  }, 60_000);

  it('fails with OUTPUT_INVALID when the objects never match, the last one the answer', async () => {
    const sessionId = newSessionId('out-finish-fail');
    const wrong = { ...valid, total: -1 };
    server.registerScript(sessionId, { steps: [{ tool_calls: [{ name: 'finish', arguments: wrong }] }, { content: 'never asked' }] });
    const r = await watchedTurn(h, sessionId, { ...endpointConfig(server.url, { outputRetries: 0 }, DEFAULT_POLICY), output: spec }, 'Where is order A-7?');
    expect([r.terminated_by, r.error_type, r.modelCalls]).toEqual(['failed', OUTPUT_INVALID, 1]);
    expect(r.error).toMatch(/^the final answer did not match the output schema after 1 attempt: total: /);
    expect(JSON.parse(r.answer)).toEqual(wrong);
  }, 60_000);

  it('replays a turn recorded before finish took the object as it ran', async () => {
    // Recorded by the code before `finish-output-schema`: its first finish gave the object, which
    // finish's text `answer` refused (INVALID_ARGUMENTS), and its last the answer as JSON text.
    // Replay takes no patch and refuses the object again (taking the new code there diverges).
    const file = path.join(__dirname, 'fixtures', 'output-finish-before-patch.json');
    const { turnId, history } = JSON.parse(readFileSync(file, 'utf8')) as { turnId: string; history: unknown };
    expect(await replayHistory(historyFromJSON(history), turnId, inject('workflowBundle'))).toEqual({ ok: true });
  }, 60_000);

  it('renders the same schema for finish in text tool-calling mode', async () => {
    const sessionId = newSessionId('out-finish-text');
    const call = (args: unknown) => JSON.stringify({ tool_calls: [{ name: 'finish', arguments: args }] });
    server.registerScript(sessionId, {
      steps: [
        { expect: { system_contains: '- finish(id: string, total: number, status: "open" | "shipped") — End the turn with your final answer.' }, content: call({ ...valid, total: 'twelve' }) },
        { expect: { last_message_contains: 'total: Invalid input: expected number' }, content: call(valid) },
      ],
    });
    const base = endpointConfig(server.url, {}, DEFAULT_POLICY);
    const config: SessionConfig = { ...base, model: { provider: 'openai', model: 'tiny', baseUrl: server.url, toolMode: 'text' }, output: spec };
    const r = await watchedTurn(h, sessionId, config, 'Where is order A-7?');
    expect([r.terminated_by, r.steps, r.toolMode?.mode]).toEqual(['finish', 2, 'text']);
    expect(r.output).toEqual(valid);
  }, 60_000);
});

describe('structured output', () => {
  it('gives the validated object of a first answer that matches, the shape told in the system prompt', async () => {
    const model = scriptFile({ steps: [{ expect: { system_contains: '## Final answer format' }, content: JSON.stringify(valid) }] });
    const out = await client.run('Where is order A-7?', { model, output: Order });
    const r = await done(out);
    expect(r.terminated_by).toBe('final_answer');
    expect(r.output).toEqual(valid);
    expect(JSON.parse(r.answer)).toEqual(valid);
    expect(r.steps).toBe(1);
  }, 60_000);

  it('sends an answer that does not match back with what is wrong, and ends with the next that does', async () => {
    const model = scriptFile({
      steps: [
        // Through finish: its answer is read as the object too.
        { tool_calls: [{ name: 'finish', arguments: { answer: JSON.stringify({ ...valid, id: 'B-7', status: 'lost' }) } }] },
        { expect: { last_message_contains: RETRY_NOTE }, content: `\`\`\`json\n${JSON.stringify(valid)}\n\`\`\`` },
      ],
    });
    const out = await client.run('Where is order A-7?', { model, output: Order });
    const r = await done(out);
    expect([r.terminated_by, r.steps, r.modelCalls]).toEqual(['final_answer', 2, 2]);
    expect(r.output).toEqual(valid);
    const messages = await h.messages(r);
    const note = messages.find((m) => m.role === 'user' && m.content.includes(RETRY_NOTE));
    expect(note?.content).toContain('(attempt 1 of 3)');
    expect(note?.content).toContain('id: Invalid string: must match pattern');
    expect(note?.content).toContain('status: Invalid option');
    // The check runs in the workflow: the turn replays from its history.
    const history = await h.client.workflow.getHandle(out.turnId).fetchHistory();
    expect(await replayHistory(history, out.turnId, inject('workflowBundle'))).toEqual({ ok: true });
  }, 60_000);

  it('fails the turn with OUTPUT_INVALID once limits.outputRetries answers were sent back', async () => {
    const wrong = (n: number) => ({ expect: n > 1 ? { last_message_contains: `(attempt ${n - 1} of 3)` } : {}, content: `The order ships soon (${n}).` });
    const sessionId = newSessionId('out-fail');
    const config: SessionConfig = { ...scriptedConfig({ steps: [wrong(1), wrong(2), wrong(3), { content: 'never asked' }] }), output: spec };
    const r = await watchedTurn(h, sessionId, config, 'Where is order A-7?');
    expect([r.terminated_by, r.error_type, r.modelCalls]).toEqual(['failed', OUTPUT_INVALID, 3]);
    expect(r.error).toBe('the final answer did not match the output schema after 3 attempts: the answer is not valid JSON; it must be a JSON object');
    expect(r.output).toBeUndefined();
    expect(r.answer).toBe('The order ships soon (3).');
  }, 60_000);

  it('bounds the answers by limits.outputRetries (0: the first must match)', async () => {
    const config: SessionConfig = { ...scriptedConfig({ steps: [{ content: '{"id": "A-7"}' }, { content: 'never asked' }] }, { outputRetries: 0 }), output: spec };
    const r = await watchedTurn(h, newSessionId('out-zero'), config, 'Where is order A-7?');
    expect([r.terminated_by, r.error_type, r.modelCalls]).toEqual(['failed', OUTPUT_INVALID, 1]);
    expect(r.error).toMatch(/^the final answer did not match the output schema after 1 attempt: total: .*; status: /);
  }, 60_000);

  it('works in text tool-calling mode: the answer envelope holds the object, a wrong one is sent back', async () => {
    const sessionId = newSessionId('out-text');
    server.registerScript(sessionId, {
      steps: [
        { content: JSON.stringify({ tool_calls: [{ name: 'get_current_time', arguments: {} }] }) },
        { content: JSON.stringify({ answer: { ...valid, total: 'twelve' } }) },
        { expect: { last_message_contains: 'total: Invalid input: expected number' }, content: JSON.stringify({ answer: valid }) },
      ],
    });
    const base = endpointConfig(server.url, {}, DEFAULT_POLICY);
    const config: SessionConfig = { ...base, model: { provider: 'openai', model: 'tiny', baseUrl: server.url, toolMode: 'text' }, output: spec };
    const r = await watchedTurn(h, sessionId, config, 'What time is it, and where is order A-7?');
    expect([r.terminated_by, r.steps]).toEqual(['final_answer', 3]);
    expect(r.toolMode?.mode).toBe('text');
    expect(r.output).toEqual(valid);
    // Every request's system message holds the tools' protocol and the answer's shape, the same text each time.
    const systems = server.requests.filter((q) => q.session === sessionId).map((q) => ((q.body as { messages: Array<{ role: string; content: string }> }).messages[0]!).content);
    expect(systems).toHaveLength(3);
    expect(new Set(systems).size).toBe(1);
    expect(systems[0]).toContain('## Final answer format');
    expect(systems[0]).toContain(JSON.stringify(spec.schema));
    expect(systems[0]).toContain('# How to reply');
  }, 60_000);

  it("types and checks an agent's output, given to its sessions by the worker", async () => {
    const clerk = defineAgent({
      name: 'clerk',
      instructions: 'You read orders.',
      model: scriptFile({ steps: [{ expect: { system_contains: 'You read orders.' }, content: 'A-7 shipped' }, { expect: { last_message_contains: RETRY_NOTE }, content: JSON.stringify(valid) }] }),
      output: Order,
    });
    h.declarations.add({ agents: [clerk.spec] });
    const out = await client.run('Where is order A-7?', { agent: clerk });
    const r = await done(out);
    expect(r.output).toEqual(valid);
    // Typed by the agent's schema.
    const status: 'open' | 'shipped' | undefined = r.output?.status;
    expect(status).toBe('shipped');
  }, 60_000);
});
