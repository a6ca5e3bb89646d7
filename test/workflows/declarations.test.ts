/**
 * The worker runs only what its owner declared. Sessions and turns are started here the way
 * anyone who reaches the Temporal server can start them (a client, the dev server's HTTP API), with
 * inputs naming commands, endpoints, folders and hosts the worker never declared: nothing of
 * them may start or be reached, and each refusal says in one line what is not declared.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowFailedError } from '@temporalio/client';
import { WorkerDeclarations } from '../../activities/declarations';
import { sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { rootCauseMessage } from '../../deterministic/errors';
import type { McpServerRef, McpToolSet } from '../../deterministic/mcp';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import { removeTempDirs, tempDir } from '../support/cli';
import { ALLOW_ALL, approveUntilDone, DEFAULT_POLICY, endpointConfig, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { EVERYTHING } from '../support/mcp-servers';
import { toolResults } from '../support/watched-turn';
import { UserError } from '../../machine/errors';
import { startForeignServer, type ForeignServer } from '../support/foreign-server';

let h: TestHarness;
let dir: string;
let hits: string[];
let server: Server;
let port: number;

beforeAll(async () => {
  dir = tempDir('harness-declared-');
  // The worker declares one MCP server, `files`, and nothing else beyond the defaults.
  const declarations = WorkerDeclarations.fromEnv({}, { mcpServers: [{ name: 'files', transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: {}, startupTimeoutMs: 30_000, callTimeoutMs: 30_000 }] });
  h = await startHarness({ declarations });
  // A local service: anything that reaches it is counted (a model endpoint, an internal API).
  hits = [];
  server = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await h?.stop();
  await new Promise((resolve) => server?.close(resolve));
  removeTempDirs();
});

/** A stdio server spec that, if ever started, leaves `marker` behind. */
function planted(name: string, marker: string): McpServerRef {
  return { name, transport: 'stdio', command: '/bin/sh', args: ['-c', `touch '${marker}'; exec '${process.execPath}' '${EVERYTHING}' stdio`], env: {}, startupTimeoutMs: 10_000, callTimeoutMs: 10_000 };
}

/** Starts a session with `config` as an outside client would, and returns why the session failed. */
async function refusal(config: SessionConfig): Promise<string> {
  const sessionId = newSessionId('declared');
  // The message's update ends with the session; what the session failed with is its result.
  await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'hello' }).catch(() => undefined);
  let failure: unknown;
  try {
    await h.client.workflow.getHandle(sessionId).result();
  } catch (err) {
    failure = err;
  }
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  return rootCauseMessage(failure);
}

describe('MCP servers', () => {
  it('a session input naming a command the worker did not declare is refused before anything starts', async () => {
    const marker = path.join(dir, 'undeclared-ran');
    const why = await refusal({ ...scriptedConfig({ steps: [{ content: 'never' }] }), mcp: { servers: [planted('evil', marker)] } });
    expect(why).toMatch(/^MCP server "evil" is not declared on this worker \(it declares files\): declare it on the worker/);
    expect(why).not.toContain('\n');
    expect(existsSync(marker)).toBe(false);
  });

  it('a session naming a declared server with a command of its own is refused, and neither command runs', async () => {
    const marker = path.join(dir, 'swapped-ran');
    const why = await refusal({ ...scriptedConfig({ steps: [{ content: 'never' }] }), mcp: { servers: [planted('files', marker)] } });
    expect(why).toMatch(/MCP server "files" as this session names it .* differs from the worker's declaration/);
    expect(existsSync(marker)).toBe(false);
    // No server of the declared name was started for it either.
    expect(h.mcp.stats()).toEqual([]);
  });

  it('a turn started directly with a forged tool set gets a result saying so, and the command never runs', async () => {
    const marker = path.join(dir, 'forged-ran');
    const sessionId = newSessionId('forged');
    const tools: McpToolSet = {
      servers: [{ server: 'evil', status: 'connected', tools: 1 }],
      tools: [{ server: 'evil', tool: 'exec', name: 'mcp__evil__exec', description: 'Runs a command.', inputSchema: { type: 'object' } }],
    };
    // The attacker chooses the policy too: the worker's declarations hold below it.
    const config: SessionConfig = { ...scriptedConfig({ steps: [{ tool_calls: [{ name: 'mcp__evil__exec', arguments: {} }] }, { content: 'done' }] }, {}, ALLOW_ALL), mcp: { servers: [planted('evil', marker)] } };
    const input: TurnInput = { sessionId, turn: 1, turnId: `${sessionId}/turn-1`, config, history: [], memory: {}, userMessage: 'go', modelCallBase: 0, mcpTools: tools };
    const r = (await h.client.workflow.execute('turnWorkflow', { workflowId: input.turnId, taskQueue: h.taskQueue, args: [input] })) as TurnResult;
    const [result] = toolResults(await h.messages(r));
    expect(result).toMatchObject({ ok: false, error_type: 'MCP_SERVER_UNAVAILABLE', message: expect.stringMatching(/MCP server "evil" is not declared on this worker/) });
    expect(existsSync(marker)).toBe(false);
  });
});

describe('model endpoints', () => {
  it('an endpoint the worker did not declare fails the turn in one line and receives no request', async () => {
    hits.length = 0;
    const sessionId = newSessionId('endpoint');
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config: endpointConfig(`http://127.0.0.1:${port}/v1`), text: 'hello' });
    const out = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(out.kind).toBe('done');
    const r = (out as { result: TurnResult }).result;
    expect(r.terminated_by).toBe('failed');
    expect(r.error).toMatch(new RegExp(`the model endpoint http://127\\.0\\.0\\.1:${port} is not declared on this worker \\(it declares https://api\\.openai\\.com, https://api\\.deepseek\\.com\\)`));
    expect(hits).toEqual([]);
  });
});

describe('skills folders', () => {
  it('a folder the worker did not declare is never mounted: the turn fails before its first step', async () => {
    const folder = path.join(dir, 'host-secrets');
    mkdirSync(path.join(folder, 'peek'), { recursive: true });
    writeFileSync(path.join(folder, 'peek', 'SKILL.md'), '---\nname: peek\ndescription: Reads the host.\n---\nRun ls /skills/peek.\n');
    const sessionId = newSessionId('skills');
    const config: SessionConfig = { ...scriptedConfig({ steps: [{ content: 'never' }] }), skills: { folders: [folder] } };
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'hello' });
    const failure = await waitForTurn(h.client, turnId, { pollMs: 100 }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(UserError);
    expect((failure as UserError).message).toMatch(/^turn \S+ failed: the skills folder \S*host-secrets is not declared on this worker$/);
    expect((failure as UserError).hint).toMatch(/^declare it on the worker/);
  });
});

describe('private hosts', () => {
  // A service of the user's on this machine, in a process the worker did not start.
  let app: ForeignServer;
  beforeAll(async () => {
    app = await startForeignServer('internal');
  });
  afterAll(async () => app?.stop());

  const fetchLocal = () => ({
    steps: [{ tool_calls: [{ name: 'http_request', arguments: { method: 'GET', url: `http://127.0.0.1:${app.port}/internal` } }] }, { content: 'done' }],
  });
  const fetchTurn = async (): Promise<TurnResult> => {
    const sessionId = newSessionId('private');
    const config: SessionConfig = { ...scriptedConfig(fetchLocal(), {}, DEFAULT_POLICY), network: { allowPrivateHosts: [`127.0.0.1:${app.port}`] } };
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'fetch it' });
    return (await approveUntilDone(h.client, sessionId, await waitForTurn(h.client, turnId, { pollMs: 100 }))).result;
  };

  it('a session opening a private host:port the worker did not declare reaches nothing, even approved', async () => {
    await app.takeHits();
    const r = await fetchTurn();
    expect(toolResults(await h.messages(r))[0]).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED' });
    expect(await app.takeHits()).toBe(0);
  });

  it('the same request reaches the host once the worker declares it', async () => {
    await app.takeHits();
    h.declarations.add({ privateHosts: [`127.0.0.1:${app.port}`] });
    const r = await fetchTurn();
    expect(toolResults(await h.messages(r))[0]).toMatchObject({ ok: true });
    expect(await app.takeHits()).toBe(1);
  });
});
