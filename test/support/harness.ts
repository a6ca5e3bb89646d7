/**
 * Test fixture: a real worker on the shared dev server with its own task queue and
 * HARNESS_HOME, plus small helpers to run turns the way the CLI does.
 */
import { mkdtempSync } from 'node:fs';
import { adoptHome } from '../../machine/home-mark';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { inject } from 'vitest';
import { type TurnResult } from '../../deterministic/session';
import { DEFAULT_LIMITS, type Limits, type SessionConfig } from '../../deterministic/session-config';
import { decideApprovals, sendMessage } from '../../client/session-client';
import { waitForTurn, type TurnOutcome } from '../../client/turn-wait';
import type { HarnessWorkers } from '../../workers/worker';
import type { ActivityDeps } from '../../activities';
import type { MessageStore } from '../../activities/store/message-store';
import type { McpPool } from '../../activities/mcp/pool';
import type { WorkerDeclarations } from '../../activities/declarations';
import type { McpServerSpec } from '../../deterministic/mcp';
import type { ChatMessage } from '../../deterministic/types';
import { parsePolicy, type Policy } from '../../deterministic/policy/schema';
import { freezePolicy } from '../../deterministic/policy';

/** A running worker and a client for one test file. */
export interface TestHarness {
  client: Client;
  taskQueue: string;
  home: string;
  address: string;
  /** Sends a message (starting the session) and waits for the turn's outcome. */
  turn(sessionId: string, config: SessionConfig, text: string, maxSteps?: number): Promise<TurnOutcome>;
  /** Like turn() but expects the turn to finish. */
  finish(sessionId: string, config: SessionConfig, text: string, maxSteps?: number): Promise<TurnResult>;
  /**
   * Like finish() for a person who approves every call the policy asks about (the default
   * policy's path); returns the result and the calls that asked, in order.
   */
  finishApproving(sessionId: string, config: SessionConfig, text: string): Promise<TurnResult & { asked: string[] }>;
  /**
   * The messages of a turn result: its own (turns from before the message store), or the whole
   * conversation read back from the store. finish() and finishApproving() fill `messages` so.
   */
  messages(r: TurnResult): Promise<ChatMessage[]>;
  /** The result with `messages` and every call record filled in from the store (what finish() returns). */
  complete(r: TurnResult): Promise<TurnResult>;
  /** The message store the worker writes to. */
  store: MessageStore;
  /** The worker's Workers (the main one, its hand-off queue's, a host's). */
  workers: HarnessWorkers;
  /** The worker's MCP clients (closed by stop()). */
  mcp: McpPool;
  /**
   * What the worker declares (the test is its owner). turn(), finish() and finishApproving()
   * declare the model endpoint and the inline MCP servers of the config they are given; a config
   * resolved from a file names servers, which declareConfig() declares from the same file.
   */
  declarations: WorkerDeclarations;
  /** Declares the model endpoint and inline MCP servers, private hosts and skills folders a session config uses (for sessions a test sends itself). */
  declareUsed(config: SessionConfig): void;
  /** Declares what a config file declares (its mcpServers, baseUrl, skills folders, private hosts), as `harness worker` does. */
  declareConfig(file: string): void;
  stop(): Promise<void>;
}

/** The Postgres the tests use (trust auth; the `test` database). */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * The worker and what it runs on, loaded by the first startHarness of a file: the many files that
 * use only the helpers below (ids, configs, the database URL) do not pay their seconds of import.
 */
const workerModules = () =>
  Promise.all([
    import('@temporalio/worker'),
    import('../../workers/tuning'),
    import('../../workers/worker'),
    import('../../activities/store/conversations'),
    import('../../activities/memory/database'),
    import('../../activities/mcp/pool'),
    import('../../activities/declarations'),
    import('../../config/declarations'),
    import('./quiet-runtime'),
  ]);

/** Starts a worker with the given activity overrides (and task queue: a second worker on a first one's queue; and Temporal server: the run's by default). */
export async function startHarness(overrides: Partial<ActivityDeps> & { taskQueue?: string; address?: string } = {}): Promise<TestHarness> {
  const [{ NativeConnection }, { DEFAULT_TUNING }, { createHarnessWorker }, { Conversations }, { Database }, { McpPool }, { WorkerDeclarations }, { declaredByConfig }, { quietRuntime }] = await workerModules();
  quietRuntime();
  const address = overrides.address ?? inject('temporalAddress');
  const taskQueue = overrides.taskQueue ?? `test-${randomUUID()}`;
  const home = overrides.home ?? mkdtempSync(path.join(os.tmpdir(), 'harness-home-'));
  // The test's own folder: marked as this user's, so the CLI it runs on this home uses it.
  adoptHome(home);
  const nativeConnection = await NativeConnection.connect({ address });
  // The message store on the real Postgres (unless the test brings its own): the worker writes
  // there and the test reads conversations back from there.
  const db = overrides.messageStore ? undefined : new Database({ home, databaseUrl: TEST_DATABASE_URL });
  const messageStore = overrides.messageStore ?? (() => db!.messages());
  const store = await messageStore();
  const conversations = new Conversations(messageStore);
  const mcp = overrides.mcp ?? new McpPool({ env: overrides.env ?? {} });
  const declarations = overrides.declarations ?? WorkerDeclarations.fromEnv(overrides.env ?? {});
  const declareUsed = (config: SessionConfig) => {
    if (config.model.provider === 'openai' && config.model.baseUrl) declarations.add({ modelEndpoints: [config.model.baseUrl] });
    const inline = (config.mcp?.servers ?? []).filter((s): s is McpServerSpec => s.command !== undefined || s.url !== undefined);
    declarations.add({ mcpServers: inline, privateHosts: config.network?.allowPrivateHosts ?? [], skillFolders: config.skills?.folders ?? [] });
  };
  const worker = await createHarnessWorker({
    declarations,
    messageStore,
    mcp,
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    bundlePath: inject('workflowBundle'),
    home,
    env: {},
    // A test's worker stops at once, as the SDK's default does (harness worker drains: drain.test.ts).
    tuning: { ...DEFAULT_TUNING, drainGraceMs: 0 },
    ...overrides,
  });
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: 'default' });

  const messages = async (r: TurnResult): Promise<ChatMessage[]> =>
    r.messages ?? (r.conversation ? conversations.read(r.sessionId, r.conversation) : []);
  const withMessages = async (out: TurnOutcome): Promise<TurnOutcome> =>
    out.kind === 'done' ? { kind: 'done', result: await complete(out.result) } : out;
  /** A result with its messages and every call record (a long turn stores older records in chunks). */
  const complete = async (r: TurnResult): Promise<TurnResult> => {
    const chunks = await Promise.all((r.storedToolCalls ?? []).map(async (hash) => JSON.parse(await conversations.getText(r.sessionId, hash)) as TurnResult['toolCalls']));
    return { ...r, messages: await messages(r), toolCalls: [...chunks.flat(), ...r.toolCalls] };
  };
  /** The turn's outcome as waitForTurn gives it (messages not read back yet). */
  const send = async (sessionId: string, config: SessionConfig, text: string, maxSteps?: number) => {
    declareUsed(config);
    const { turnId } = await sendMessage(client, { taskQueue, sessionId, config, text, ...(maxSteps ? { maxSteps } : {}) });
    return waitForTurn(client, turnId, { pollMs: 100 });
  };
  const turn = async (sessionId: string, config: SessionConfig, text: string, maxSteps?: number) => withMessages(await send(sessionId, config, text, maxSteps));
  return {
    client,
    taskQueue,
    home,
    address,
    turn,
    async finish(sessionId, config, text, maxSteps) {
      const out = await turn(sessionId, config, text, maxSteps);
      if (out.kind !== 'done') throw new Error(`turn is waiting: ${JSON.stringify(out.state)}`);
      return out.result;
    },
    async finishApproving(sessionId, config, text) {
      // The store is read once, when the turn is done.
      const { result, asked } = await approveUntilDone(client, sessionId, await send(sessionId, config, text));
      return { ...(await complete(result)), asked };
    },
    messages,
    complete,
    store,
    workers: worker,
    mcp,
    declarations,
    declareUsed,
    declareConfig(file) {
      declarations.add(declaredByConfig(file, {}, path.dirname(file)));
    },
    async stop() {
      worker.shutdown();
      await running;
      await mcp.closeAll();
      await nativeConnection.close();
      await connection.close();
      await db?.close();
    },
  };
}

/**
 * A person who approves every call the policy asks about: from a turn's outcome, approves each
 * wait for approval until the turn is done. Returns its result and the calls that asked, in
 * order (`tool: command` for a shell call, `tool: args` for others).
 */
export async function approveUntilDone(client: Client, sessionId: string, first: TurnOutcome): Promise<{ result: TurnResult; asked: string[] }> {
  let out = first;
  const asked: string[] = [];
  while (out.kind === 'waiting') {
    const p = out.state.pending;
    if (p?.kind !== 'approvals') throw new Error(`turn waits for something else: ${JSON.stringify(p)}`);
    asked.push(...p.calls.map((c) => `${c.tool}: ${typeof (c.args as { command?: unknown }).command === 'string' ? (c.args as { command: string }).command : JSON.stringify(c.args)}`));
    await decideApprovals(client, sessionId, { calls: p.calls.map((c) => ({ callId: c.callId, digest: c.digest ?? '' })), approve: true });
    out = await waitForTurn(client, out.state.turnId, { pollMs: 100 });
  }
  return { result: out.result, asked };
}

/** The policy a user gets without configuring one: mode `ask`, the default rules written out (as resolveSessionConfig makes it). */
export const DEFAULT_POLICY: Policy = freezePolicy(parsePolicy(undefined));

/**
 * The policy switched off: every valid call runs without asking. Only for tests whose subject
 * is below the policy (a tool's own checks, such as workspace confinement, that the default
 * rules would stop first) or that need a call the default policy asks about to run unattended;
 * each such test passes it explicitly and says why. Everything else runs under DEFAULT_POLICY.
 */
export const ALLOW_ALL: Policy = parsePolicy({ mode: 'auto', defaults: false });

/** A session config for a scripted model with fast limits suitable for tests, under the default policy unless given one. */
export function scriptedConfig(script: unknown, limits: Partial<Limits> = {}, policy: Policy = DEFAULT_POLICY): SessionConfig {
  return {
    model: { provider: 'scripted', model: 'scripted', script },
    systemPrompt: 'You are a test agent.',
    limits: { ...DEFAULT_LIMITS, modelHeartbeatMs: 5_000, ...limits },
    policy,
  };
}

/** A session config for an OpenAI-compatible endpoint (e.g. a scripted server started by the test), under the default policy unless given one. */
export function endpointConfig(baseUrl: string, limits: Partial<Limits> = {}, policy: Policy = DEFAULT_POLICY): SessionConfig {
  return {
    model: { provider: 'openai', model: 'test-model', baseUrl },
    systemPrompt: 'You are a test agent.',
    limits: { ...DEFAULT_LIMITS, modelHeartbeatMs: 5_000, ...limits },
    policy,
  };
}

/** A fresh session id. */
export function newSessionId(prefix = 's'): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}
