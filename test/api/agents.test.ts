/**
 * Agents end to end, in process: two agents with different tools on ONE worker and task queue
 * (createHarnessWorker({ agents })), their model an OpenAI-compatible scripted server the test
 * reads the requests of. A session of each agent is offered only that agent's tools, under its
 * instructions, and keeps its agent across continue-as-new; a session without an agent runs as the
 * default agent, offered only the worker's own tools (a forged call of an agent's tool is not run),
 * and on a worker that requires agents it is refused (AGENT_REQUIRED). A session naming an agent the worker lacks, or asking for more
 * than its agent allows (another model, a tool or an MCP server the agent does not list), is
 * refused in one line before any model call or server start.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { WorkflowFailedError } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { connectHarness, createHarnessWorker, defineAgent, defineTool, UserError, type HarnessClient, type HarnessWorker } from '../../index';
import { sendMessage } from '../../client/session-client';
import { resolveSessionConfig } from '../../config/resolve';
import { failureType, rootCauseMessage } from '../../deterministic/errors';
import type { SessionInput } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import type { Script } from '../../scripted-model/script';
import { quietRuntime } from '../support/quiet-runtime';
import { TEST_DATABASE_URL } from '../support/harness';
import { EVERYTHING } from '../support/mcp-servers';

const lookup = (name: string) =>
  defineTool({
    name,
    description: `Look an order up by its id (${name}).`,
    schema: z.object({ id: z.string() }),
    risk: 'read_only',
    run: ({ id }) => ({ found: `${name}-${id}` }),
  });
const alphaTool = lookup('alpha_lookup');
const betaTool = lookup('beta_lookup');
const ownTool = lookup('own_lookup');
// An agent's instructions are the whole system prompt of its sessions; the limit makes a session continue as new after each turn.
const alpha = defineAgent({ name: 'alpha', instructions: 'You are Alpha, who looks orders up.', model: 'test-model', tools: [alphaTool], policy: { mode: 'auto' }, limits: { continueAsNewAfterEvents: 10 } });
const beta = defineAgent({ name: 'beta', instructions: 'You are Beta, who looks orders up.', model: 'test-model', tools: [betaTool], policy: { mode: 'auto' } });

const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-agents-api-'));
const marker = path.join(dir, 'files-started');
let server: ScriptedModelServer;
let worker: HarnessWorker;
let running: Promise<void>;
let client: HarnessClient;
const taskQueue = `agents-${randomUUID()}`;
const env = () => ({ PATH: process.env.PATH, TEMPORAL_ADDRESS: inject('temporalAddress'), DATABASE_URL: TEST_DATABASE_URL, OPENAI_BASE_URL: server.url });

beforeAll(async () => {
  quietRuntime();
  server = await startScriptedModel();
  worker = await createHarnessWorker({
    tools: [ownTool],
    agents: [alpha, beta],
    // The worker declares a server neither agent lists: a session may not add it. Started, it leaves a marker.
    mcpServers: { files: { command: '/bin/sh', args: ['-c', `touch '${marker}'; exec '${process.execPath}' '${EVERYTHING}' stdio`] } },
    env: env(),
    taskQueue,
    home: path.join(dir, 'home'),
    log: () => undefined,
    bundlePath: inject('workflowBundle'),
  });
  running = worker.run();
  client = await connectHarness({ env: env(), taskQueue, cwd: dir });
});
afterAll(async () => {
  worker?.shutdown();
  await running?.catch(() => undefined);
  await client?.close();
  await server?.close();
});

/** The tool names of each model request the session made, in order. */
const offered = (sessionId: string): string[][] =>
  server.requests.filter((r) => r.session === sessionId).map((r) => ((r.body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name));
const custom = (names: string[]) => names.filter((n) => n.endsWith('_lookup'));

/** A session id with its script registered on the scripted server. */
function scripted(script: Script): string {
  const sessionId = `s-agents-${randomUUID().slice(0, 8)}`;
  server.registerScript(sessionId, script);
  return sessionId;
}

const looksUp = (tool: string, instructions: string): Script => ({
  steps: [
    { expect: { tools_include: tool, system_contains: instructions }, tool_calls: [{ name: tool, arguments: { id: '7' } }] },
    { expect: { last_message_contains: `${tool}-7` }, content: `Found it. ${tool} DONE` },
    { expect: { tools_include: tool }, content: 'Still here. DONE' },
  ],
});

describe('two agents on one worker', () => {
  it("offers a session of each agent only that agent's tools, under its instructions", async () => {
    for (const [agent, tool, other, instructions] of [
      ['alpha', 'alpha_lookup', 'beta_lookup', 'You are Alpha'],
      ['beta', 'beta_lookup', 'alpha_lookup', 'You are Beta'],
    ] as const) {
      const sessionId = scripted(looksUp(tool, instructions));
      const out = await client.run('find order 7', { sessionId, agent });
      expect(out.kind).toBe('done');
      if (out.kind !== 'done') return;
      expect(out.result.answer).toBe(`Found it. ${tool} DONE`);
      expect(out.result.toolCalls.map((c) => [c.name, c.ok])).toEqual([[tool, true]]);
      const requests = offered(sessionId);
      expect(requests).toHaveLength(2);
      for (const names of requests) {
        expect(custom(names)).toEqual([tool]);
        expect(names).not.toContain(other);
      }
    }
  }, 90_000);

  it("keeps its agent's settings and tools across continue-as-new", async () => {
    const sessionId = scripted(looksUp('alpha_lookup', 'You are Alpha'));
    await client.run('find order 7', { sessionId, agent: 'alpha' });
    const second = await client.run('and again', { sessionId });
    expect(second.kind).toBe('done');
    expect(custom(offered(sessionId).at(-1)!)).toEqual(['alpha_lookup']);
    // The run after continue-as-new started with the resolved config: the agent's, not the request.
    const history = await client.temporal.workflow.getHandle(sessionId).fetchHistory();
    const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
    expect(started.continuedExecutionRunId).toBeTruthy();
    const input = defaultPayloadConverter.fromPayload<SessionInput>(started.input!.payloads![0]!);
    expect(input.config).toMatchObject({ agent: 'alpha', agentResolved: true, model: { model: 'test-model' }, systemPrompt: 'You are Alpha, who looks orders up.', limits: { continueAsNewAfterEvents: 10 } });
    expect(input.config.agentSet).toBeUndefined();
  }, 90_000);

  it("offers a session without an agent only the worker's own tools, and does not run a forged call of an agent's tool", async () => {
    const sessionId = scripted({
      steps: [
        { expect: { tools_include: 'own_lookup' }, tool_calls: [{ name: 'alpha_lookup', arguments: { id: '7' } }] },
        { content: 'Refused. DONE' },
      ],
    });
    const out = await client.run('hello', { sessionId, model: 'test-model' });
    expect(out.kind).toBe('done');
    if (out.kind !== 'done') return;
    for (const names of offered(sessionId)) expect(custom(names)).toEqual(['own_lookup']);
    expect(out.result.toolCalls.map((c) => [c.name, c.ok])).toEqual([['alpha_lookup', false]]);
    // The model was told, and nothing ran: no "found" result anywhere in what it was sent.
    const last = JSON.stringify(server.requests.filter((r) => r.session === sessionId).at(-1)!.body);
    expect(last).not.toContain('alpha_lookup-7');
  }, 60_000);
});

describe('a worker that requires agents', () => {
  const strictQueue = `agents-strict-${randomUUID()}`;
  let strict: HarnessWorker;
  let strictRunning: Promise<void>;
  let strictClient: HarnessClient;
  beforeAll(async () => {
    strict = await createHarnessWorker({ agents: [alpha], requireAgent: true, env: env(), taskQueue: strictQueue, home: path.join(dir, 'strict-home'), log: () => undefined, bundlePath: inject('workflowBundle') });
    strictRunning = strict.run();
    strictClient = await connectHarness({ env: env(), taskQueue: strictQueue, cwd: dir });
  });
  afterAll(async () => {
    strict?.shutdown();
    await strictRunning?.catch(() => undefined);
    await strictClient?.close();
  });

  it('refuses a session naming no agent before any model call (AGENT_REQUIRED), and runs one that names its agent', async () => {
    const agentless = scripted({ steps: [{ content: 'never' }] });
    const out = await strictClient.run('hello', { sessionId: agentless, model: 'test-model' }).then(
      (o) => o,
      (e: unknown) => e,
    );
    expect(out).toBeInstanceOf(UserError);
    const text = (out as UserError).message;
    expect(text).not.toContain('\n');
    expect(text).toContain('this worker runs only sessions that name one of its agents (alpha)');
    expect(offered(agentless)).toEqual([]);

    const named = scripted(looksUp('alpha_lookup', 'You are Alpha'));
    const ok = await strictClient.run('find order 7', { sessionId: named, agent: 'alpha' });
    expect(ok.kind).toBe('done');
  }, 90_000);
});

describe('a session refused by its agent', () => {
  /** Sends as the client does and returns the one-line refusal, the session's failure type, and what ran. */
  async function refused(sessionId: string, send: () => Promise<unknown>): Promise<{ message: string; type: string | undefined }> {
    const err = await send().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UserError);
    const message = (err as UserError).message;
    expect(message).not.toContain('\n');
    const failure = await client.temporal.workflow
      .getHandle(sessionId)
      .result()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    // Nothing ran: no model call, no turn.
    expect(offered(sessionId)).toEqual([]);
    expect(rootCauseMessage(failure)).toBe(message.replace(/^session \S+ was refused: /, ''));
    return { message, type: failureType(failure) };
  }

  it('names the agents the worker has when the agent is not one of them (AGENT_UNKNOWN)', async () => {
    const sessionId = scripted({ steps: [{ content: 'never' }] });
    const r = await refused(sessionId, () => client.send('hello', { sessionId, agent: 'gamma' }));
    expect(r.type).toBe('AGENT_UNKNOWN');
    expect(r.message).toBe(`session ${sessionId} was refused: agent "gamma" is not one of this worker's agents (it has alpha, beta)`);
  }, 60_000);

  it('refuses another model than the agent\'s (AGENT_MISMATCH naming model)', async () => {
    const sessionId = scripted({ steps: [{ content: 'never' }] });
    const r = await refused(sessionId, () => client.send('hello', { sessionId, agent: 'alpha', model: 'bigger-model' }));
    expect(r.type).toBe('AGENT_MISMATCH');
    expect(r.message).toBe(`session ${sessionId} was refused: agent "alpha": model: the session's model bigger-model is not the agent's model test-model`);
  }, 60_000);

  it("refuses a tool of another agent (AGENT_MISMATCH naming tools.required)", async () => {
    const sessionId = scripted({ steps: [{ content: 'never' }] });
    const r = await refused(sessionId, () => client.send('hello', { sessionId, agent: 'alpha', requireTools: ['beta_lookup'] }));
    expect(r.type).toBe('AGENT_MISMATCH');
    expect(r.message).toMatch(/agent "alpha": tools\.required: tool "beta_lookup" is not one of the agent's \(it has alpha_lookup\)$/);
  }, 60_000);

  it('refuses an input that adds an MCP server the agent does not list, though the worker declares it: the server never starts', async () => {
    const sessionId = scripted({ steps: [{ content: 'never' }] });
    // Any client may write the session's input: this one adds the worker's server to an agent's session.
    const config: SessionConfig = { ...resolveSessionConfig({ agent: 'beta' }, {}, dir), mcp: { servers: [{ name: 'files', startupTimeoutMs: 10_000, callTimeoutMs: 10_000 }] } };
    config.agentSet = [...config.agentSet!, 'mcp'];
    const r = await refused(sessionId, () => sendMessage(client.temporal, { taskQueue, sessionId, config, text: 'hello' }));
    expect(r.type).toBe('AGENT_MISMATCH');
    expect(r.message).toMatch(/agent "beta": mcp\.servers: MCP server "files" is not one of the agent's \(it has none\)$/);
    expect(existsSync(marker)).toBe(false);
  }, 60_000);
});
