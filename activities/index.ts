/**
 * createActivities: every activity of the harness, built from explicit dependencies
 * (no module-level clients), so tests pass fakes to the same factory.
 */
import type { CompressContextInput } from '../deterministic/context/types';
import type {
  ExecuteToolInput,
  ToolOutcome,
  ModelCallInput,
} from '../deterministic/activity-types';
import { builtinRegistry } from '../deterministic/builtin-tools';
import { workspaceBudget } from './tools/workspace-usage';
import { Context } from '@temporalio/activity';
import { withHeartbeat } from './heartbeat';
import { createCallModel, modelNotConfigured } from './model/activities';
import { ModelStreamSink } from './model/stream-writer';
import { createCompressContextActivity } from './compress/activity';
import { OpenAIModelClient, type ModelClient } from './model/client';
import { DEFAULT_MODEL_ENDPOINT, keyForEndpoint } from './model/keys';
import { modelReplyLimit } from './model/body';
import { failpoints } from './failpoints';
import { Conversations } from './store/conversations';
import type { MessageStore } from './store/message-store';
import { withStore } from './store/errors';
import { resolveArgs, resultView } from './store/views';
import type { BlobArg } from '../deterministic/conversation';
import { ScriptedModels } from './scripted-models';
import { createToolExecutor } from './tools/executor';
import { workerServices } from './tools/net-services';
import { ownPortLookup } from './tools/own-ports';
import { rm } from 'node:fs/promises';
import { appliedWritesDir } from './tools/applied-writes';
import { SESSION_ID } from './tools/workspace';
import type { SandboxPool } from './sandbox/pool';
import type { SkillsProvider } from './skills/provider';
import { defaultSandboxes, defaultSkills } from './worker-defaults';
import { Database } from './memory/database';
import { createRetentionActivities } from './store/purge';
import { McpPool } from './mcp/pool';
import { awaitTurnRun } from './turn-runs';
import { awaitScheduledTurn, deliverScheduledMessage } from './schedule';
import { createPrepareFork } from './fork';
import { createEvalActivities } from './eval';
import { createEvalKeepActivities } from './eval-keep';
import { createCompareRerun, type CompareRerunInput } from './rerun-compare';
import { failedTurnSpend } from './turn-spend';
import { createMcpActivities } from './mcp/activities';
import type { HarnessTool } from '../deterministic/custom-tools';
import { createCustomTools } from './custom-tools/executor';
import { FileCallClaims } from './custom-tools/claims';
import { createToolSpecs } from './tool-specs';
import { createHostActivities } from './sandbox-host';
import type { HostRef } from '../deterministic/host';
import { WorkerDeclarations } from './declarations';
import { agentToolRefusal, resolveAgent, resolveSubAgent } from './agents';
import { subAgentDescription, subAgentToolSpec } from '../deterministic/sub-agents';
import { createWebhookActivities } from './webhook';
import { createPrepareEvalTrials, createPrepareTurn } from './prepare-turn';
import type { SessionConfig } from '../deterministic/session-config';

/** What the activities depend on. */
export interface ActivityDeps {
  /** HARNESS_HOME: workspaces and scripts live below it. */
  home: string;
  /** The worker's environment: API keys are read here, never from workflow inputs. */
  env: Record<string, string | undefined>;
  /** Replaces the openai-backed client (tests). */
  modelClient?: ModelClient;
  scripted?: ScriptedModels;
  /** Session sandboxes for run_shell (default: Docker with the harness-sandbox image). */
  sandboxes?: SandboxPool;
  /** Skills offered to sessions (default: the project's skills/ folder). */
  skills?: SkillsProvider;
  /** Long-term memory (default: DATABASE_URL, else the embedded PGlite under HARNESS_HOME). */
  memory?: Database;
  /** The message store (default: the memory database). */
  messageStore?: () => Promise<MessageStore>;
  /** MCP clients shared by the worker's sessions (default: a new pool; the worker closes it at shutdown). */
  mcp?: McpPool;
  /** Tools written in TypeScript (the public defineTool); sessions this worker starts record them. */
  tools?: readonly HarnessTool[];
  /** Per tool name, the secrets only that tool's code gets (ctx.secrets); never in history. */
  toolSecrets?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Stream model replies' text as it arrives to the message store's database, for live views anywhere (model/stream-writer.ts); the CLI's workers do. */
  streamText?: boolean;
  /** The sandbox host this worker serves (deterministic/host.ts): prepareTurn names it, claimHost takes sessions over to it. */
  host?: HostRef;
  /** What the worker's owner declared may run or be reached, and its agents (default: what its environment declares). */
  declarations?: WorkerDeclarations;
  /** The task queue only this worker polls, where handed-on model calls come back to it (workers/handoff-queue.ts). */
  handoffQueue?: string;
}

/** Builds the activities; the returned object is what the worker registers. */
export function createActivities(deps: ActivityDeps) {
  const registry = builtinRegistry();
  const specs = registry.specs();
  const scripted = deps.scripted ?? new ScriptedModels(deps.home);
  const skills = deps.skills ?? defaultSkills(deps.env);
  const sandboxes = deps.sandboxes ?? defaultSandboxes(deps.home, deps.env, skills);
  const memory = deps.memory ?? Database.fromEnv(deps.home, deps.env);
  const messageStore = deps.messageStore ?? (() => memory.messages());
  // Claims of calls that must not run twice: in the store's database, seen by every worker on any host.
  const claims = async () => (await messageStore()).callClaims?.() ?? new FileCallClaims(deps.home);
  const tools = createToolExecutor({
    claims,
    home: deps.home,
    workspaceMaxBytes: workspaceBudget(deps.env),
    memory: () => memory.store(),
    sandboxes: (sessionId) => sandboxes.get(sessionId),
    skills: (sessionId) => skills.catalog(sessionId),
    workerServices: workerServices(deps.env),
    ownPorts: ownPortLookup({ home: deps.home }),
  });
  const clients = new Map<string, ModelClient>();
  const failpoint = failpoints(deps.env, deps.home);
  scripted.useStore(messageStore);
  const conversations = new Conversations(messageStore);
  const declarations = deps.declarations ?? WorkerDeclarations.fromEnv(deps.env);
  const mcp = createMcpActivities({ pool: deps.mcp ?? new McpPool({ env: deps.env }), conversations, declarations });
  const custom = createCustomTools({ home: deps.home, claims, tools: deps.tools ?? [], ...(deps.toolSecrets ? { secrets: deps.toolSecrets } : {}) });

  const clientFor = (baseURL: string | undefined, apiKey: string): ModelClient => {
    const key = `${baseURL ?? ''}|${apiKey}`;
    let client = clients.get(key);
    if (!client) {
      client = new OpenAIModelClient({ apiKey, ...(baseURL ? { baseURL } : {}), timeoutMs: 10 * 60_000, maxReplyBytes: modelReplyLimit(deps.env) });
      clients.set(key, client);
    }
    return client;
  };

  const resolveModel = async (input: ModelCallInput) => {
    if (deps.modelClient) return { client: deps.modelClient, endpoint: 'injected' };
    if (input.model.provider === 'scripted') {
      // A sub-agent's turn plays its own script, under its own key.
      const url = await scripted.baseUrl(input.model.scriptKey ?? input.sessionId, input.model.script);
      return { client: clientFor(url, 'scripted'), endpoint: url };
    }
    const baseURL = input.model.baseUrl ?? deps.env.OPENAI_BASE_URL;
    // Before any request: the worker posts the conversation only where its owner said it may.
    declarations.checkModelEndpoint(baseURL);
    const key = keyForEndpoint(baseURL, deps.env);
    if ('problem' in key) throw modelNotConfigured(key.problem);
    return { client: clientFor(baseURL, key.apiKey), endpoint: baseURL ?? DEFAULT_MODEL_ENDPOINT };
  };

  // A sub-agent's tool (agent__<name>) is described as this worker declares the agent.
  const toolSpecs = createToolSpecs(specs, conversations, (name) => {
    const agent = declarations.agent(name);
    return agent && subAgentToolSpec({ name, description: subAgentDescription(name, agent.description, agent.systemPrompt) });
  });
  // Streamed text goes where the messages go: readers of the message store's database see it.
  const streams = deps.streamText ? new ModelStreamSink(async () => (await messageStore()).modelStreams?.()) : undefined;
  const callModel = createCallModel(resolveModel, toolSpecs, { conversations, registry, ...(streams ? { streams } : {}), ...(deps.handoffQueue ? { handoffQueue: deps.handoffQueue } : {}) });
  const evalActivities = createEvalActivities({ home: deps.home, conversations, workspaceMaxBytes: workspaceBudget(deps.env) });
  const compressContext = createCompressContextActivity(resolveModel, { signal: () => Context.current().cancellationSignal, attempt: () => Context.current().info.attempt, conversations });

  return {
    // purgeSession, storedSessionsIdleSince: retention (`end --purge`, `sessions prune`).
    ...createRetentionActivities({ home: deps.home, messages: messageStore, sandboxes }),

    prepareTurn: createPrepareTurn({ home: deps.home, specs, scripted, conversations, declarations, skills, memory, messageStore, custom, ...(deps.host ? { host: deps.host } : {}) }),
    prepareEvalTrials: createPrepareEvalTrials({ declarations, custom, skills, ...(deps.host ? { host: deps.host } : {}) }),

    ...createHostActivities({ home: deps.home, ...(deps.host ? { host: deps.host } : {}), store: messageStore }),

    // checkNotify, deliverWebhook: a session's webhook, only to a URL this worker declared.
    ...createWebhookActivities({ env: deps.env, declarations }),

    /**
     * A session that names an agent, as it starts: its config with the agent's settings, as this
     * worker declares them (a local activity: the session's own worker answers).
     */
    async resolveAgent(input: { sessionId: string; config: SessionConfig }): Promise<SessionConfig> {
      return resolveAgent(input.config, declarations);
    },

    /** A sub-agent's turn, as a call starts it: its config, as this worker declares the sub-agent (refused unless the session's agent lists it). */
    async resolveSubAgent(input: { sessionId: string; parent: SessionConfig; name: string }): Promise<SessionConfig> {
      return resolveSubAgent(input, declarations);
    },

    /** One model call; with the message store, the conversation is rebuilt from it and the reply chained to it. */
    callModel: (input: ModelCallInput) =>
      withStore(async () => {
        const reply = await callModel(input);
        // Crash tests kill the worker here: the reply is stored, its completion not recorded.
        await failpoint('after-store:callModel');
        return reply;
      }),

    /**
     * Does nothing: scheduling it ends the turn's workflow task, so the local activities before it
     * (quick model calls, a local write) are recorded before what follows (workflows/turn/model-call.ts).
     */
    async checkpoint(): Promise<void> {},

    /** Shrinks the context: compacts big tool results, summarises the middle with one model call. */
    compressContext: (input: CompressContextInput) => withStore(() => compressContext(input)),

    /** Lists the tools of the session's MCP servers (at session start, and when a server's list changed). */
    discoverMcpTools: mcp.discoverMcpTools,
    loadMcpTools: mcp.loadMcpTools,

    /** The session's wait for a turn `harness retry` reset: the reset run's result. */
    awaitTurnRun,

    /** `harness fork`: the recorded conversation in the fork's store, the turn's files in its workspace. */
    prepareFork: createPrepareFork({ home: deps.home, conversations, store: messageStore, workspaceMaxBytes: workspaceBudget(deps.env) }),

    /** `harness rerun`: where the rerun's conversation first differs from the record's (tests hold a rerun idle at its failpoint). */
    compareRerun: (input: CompareRerunInput) => failpoint('compare-rerun').then(() => createCompareRerun(conversations)(input)),

    /** What a turn that returned no result (failed, cancelled, terminated) spent, from its history. */
    failedTurnSpend,

    /** A schedule's firing (workflows/schedule.ts): its message sent as `harness run` sends, and the wait for its turn. */
    deliverScheduledMessage,
    awaitScheduledTurn,

    // prepareEvalCase, planEvalFork, checkEvalTrial: an eval trial's workspace, fork and checks.
    ...evalActivities,
    // checkAndKeepEvalTrial, keepEvalTrial, finishEvalReport: an eval's trial reports kept in the store.
    ...createEvalKeepActivities({ messages: messageStore, check: evalActivities.checkEvalTrial }),

    /** Stores a value of the session once (a scripted model's script) and returns its reference. */
    async storeValue(input: { sessionId: string; value: unknown }): Promise<BlobArg> {
      const text = JSON.stringify(input.value);
      return { $blob: await withStore(() => conversations.putText(input.sessionId, text)), bytes: Buffer.byteLength(text, 'utf8'), preview: text.slice(0, 120) };
    },

    /**
     * Frees what a session held on this worker: its sandbox container. It heartbeats (when its
     * caller asks for heartbeats), so a worker lost while removing is replaced within seconds.
     */
    async closeSession(input: { sessionId: string }): Promise<{ removed: boolean }> {
      return withHeartbeat(async () => {
        // Crash tests kill the worker here, before anything is removed.
        await failpoint('close-session');
        // The records that made this session's appends exactly-once are not needed once it ended
        // (the id names a folder: only a well-formed one is removed).
        if (SESSION_ID.test(input.sessionId)) {
          await rm(appliedWritesDir(deps.home, input.sessionId), { recursive: true, force: true }).catch(() => undefined);
        }
        // Its calls' claims too (a store out of reach keeps them until the session is purged).
        await claims().then((c) => c.purge(input.sessionId)).catch(() => undefined);
        try {
          await sandboxes.remove(input.sessionId);
          return { removed: true };
        } catch {
          return { removed: false }; // Docker gone: the orphan sweep at the next worker start removes it
        }
      });
    },

    /** Runs one tool outside the workflow; failures come back as results, never as errors. */
    async executeTool(input: ExecuteToolInput): Promise<ToolOutcome> {
      return withHeartbeat(async () => {
        // With the message store, payload arguments arrive as references and large results leave as one.
        const args = input.store ? await withStore(() => resolveArgs(input.args, (hash) => conversations.getText(input.sessionId, hash))) : input.args;
        if (input.mcp) {
          const outcome = await mcp.callMcpTool({ ...input, mcp: input.mcp }, args);
          const view = input.store ? await withStore(() => resultView(outcome, input.callId, input.sessionId, conversations)) : outcome;
          return outcome.mcpListChanged ? { ...view, mcpListChanged: true } : view;
        }
        // A custom tool runs only for a session whose agent has it (a turn's input is not trusted).
        const result = input.custom
          ? (agentToolRefusal(input, declarations) ?? (await custom.execute(input, args)))
          : await tools.execute({
              sessionId: input.sessionId,
              name: input.name,
              args,
              turnId: input.turnId,
              callId: input.callId,
              ...(input.namespace ? { namespace: input.namespace } : {}),
              ...(input.allowPrivateHosts?.length ? { allowPrivateHosts: declarations.declaredPrivateHosts(input.allowPrivateHosts) } : {}),
            });
        // Crash tests kill the worker here: the side effect happened, its result is not recorded.
        await failpoint(`after-tool:${input.name}`);
        return input.store ? withStore(() => resultView(result, input.callId, input.sessionId, conversations)) : result;
      });
    },
  };
}
