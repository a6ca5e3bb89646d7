/**
 * turnWorkflow: one user turn, the ReAct loop driven by activities, waiting on humans durably.
 * This file wires the turn: its model and compression activities charged to its budget, its
 * patches (patches.ts), its handlers and waits on people (handlers.ts), its tool runs (tools.ts)
 * and the loop's options (below, from the turn's input and what prepareTurn found); then it runs
 * the loop (loop.ts) and ends the turn or continues it as new.
 */
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  makeContinueAsNewFunc,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { PrepareTurnInput, PrepareTurnResult } from '../../deterministic/activity-types';
import { missingTools, missingToolsMessage } from '../../deterministic/custom-tools';
import type { McpToolSet } from '../../deterministic/mcp';
import { mcpRules } from '../../deterministic/mcp-tools';
import { type TurnInput, type TurnResult } from '../../deterministic/session';
import { DEFAULT_LIMITS } from '../../deterministic/session-config';
import { decidedToolMode } from '../../deterministic/tool-mode';
import { discoverActivity, loadMcpToolsActivity, STORE_ACTIVITY, type Activities } from '../activity-options';
import { runTurn, type TurnOptions } from './loop';
import { TurnBudget } from './budget';
import { RunEvents } from './run-events';
import { TURN_EVENT_BUDGET_WHEN_UNSET } from './replay-constants';
import { cachePrefix, parallelToolCalls, turnPatches, type TurnPatches } from './patches';
import { registerTurnHandlers } from './handlers';
import { toolRunner } from './tools';
import { HostRoute } from './host-route';
import { ModelCaller } from './model-call';
import { mcpRelister, turnRegistry, withToolList } from './mcp';
import { recordedEffectsOf } from './recorded-effects';
import { withOutputFinish } from './output';
import { OutputSchemaOffer } from '../../deterministic/finish-output';
import { mcpScopeOf } from '../../deterministic/mcp-scope';
import { SubAgents, subAgentTools } from './sub-agent';
import { endToldIfThrown, TurnNotifier, type ThrownEnd } from './notify';
import { TurnSleeper } from './wait';
import { registerSteering } from './steer';
import { backgroundMemo, runAsBackgroundChild } from './background';

const { storeValue } = proxyActivities<Activities>(STORE_ACTIVITY);

/**
 * prepareTurn (it reads the skills folders, a few memories and a scripted model's stored script)
 * on the worker that runs the turn's first workflow task, for a session without a host (or whose
 * host was lost): that worker serves the shared queue, as the one a regular activity would reach,
 * so it hosts the session either way. It saves a trial or a short turn an activity task and a
 * workflow task. The same bounds: a store outage is ridden out for ten minutes, the backoff past
 * a minute on a timer (the SDK's local retry threshold).
 */
const { prepareTurn: prepareTurnHere } = proxyLocalActivities<Activities>(STORE_ACTIVITY);

/** Runs one turn of a session and returns its result; failures of the model end it as `failed`. */
export async function turnWorkflow(input: TurnInput): Promise<TurnResult> {
  // A turn that throws still tells the session's webhook it ended (notify.ts).
  const end: ThrownEnd = {};
  const play = () => endToldIfThrown(end, () => playTurn(input, end));
  // A background sub-agent tells its session it runs, and how it ended (background.ts).
  return input.subAgent?.background ? runAsBackgroundChild(input, play) : play();
}

/** The turn: its activities, handlers and loop; `end` learns its webhook and step as it starts. */
async function playTurn(input: TurnInput, end: ThrownEnd): Promise<TurnResult> {
  const { limits } = input.config;
  const patches = turnPatches(input);
  const { policy, messageStore } = patches;
  const events = new RunEvents(input.resume !== undefined);
  // A model call runs in the workflow task while it is quick (model-call.ts). Every model call and
  // compression is charged to the turn's spend as it returns; with a budget, each model call is
  // checked against it first (budget.ts).
  const models = new ModelCaller(limits, events, patches.since);
  const activity = <T>(run: () => Promise<T>) => models.activity(run);
  const budget = new TurnBudget(input);
  const callModel = budget.charging((req) => models.call(req));
  const { compressContext: compressActivity } = proxyActivities<Activities>({
    startToCloseTimeout: limits.modelTimeoutMs,
    retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumAttempts: 3 },
  });
  const compressContext = budget.chargingCompression(compressActivity);

  // Its handlers are registered before the first await, so the turn's first workflow task has them.
  // A session with a webhook tells it of each wait on a person and of the turn's end (notify.ts).
  const notifier = input.config.notify ? new TurnNotifier(input, events) : undefined;
  const waits = registerTurnHandlers(input, events, policy, () => models.beforeWait(), notifier && ((pending) => notifier.waiting(pending)));
  const { state, waitForHuman } = waits;
  // The `wait` tool sleeps the turn on a timer; `harness wake` ends it early (wait.ts).
  const sleeper = new TurnSleeper(input, state, events, () => models.beforeWait());
  // Messages the user sends while the turn runs reach its next step (steer.ts).
  const steering = registerSteering(state, events);
  Object.assign(end, { notifier, step: () => state.step });
  // Calls of the sub-agents the session's agent has start child turns (sub-agent.ts); their waits show here.
  const hostRoute: { current?: HostRoute } = {};
  const subAgents = new SubAgents(input, state, budget, () => hostRoute.current, models, events);

  // A run that continues a long turn keeps what the turn's first run prepared; a turn prepares
  // on its session's sandbox host (host-route.ts), which a session without one never has.
  // A turn its caller prepared (an eval's trial) has no host and runs no prepareTurn.
  const given = input.resume?.prepared ?? input.prepared;
  const hosted = given
    ? { route: HostRoute.resumed(input, events), prepared: given, note: undefined }
    : await HostRoute.prepare({ ...input, ...(input.resume?.host ? { host: input.resume.host } : {}) }, prepareRequest(input), events, prepareTurnHere);
  const { route, prepared } = hosted;
  hostRoute.current = route;
  // A session moved off a lost host is told so with the message that starts the turn.
  const noted = hosted.note ? { ...input, userMessage: `${hosted.note}\n\n${input.userMessage}` } : input;
  // A session carrying its MCP tools by reference: their list is read back once (mcp.ts).
  const turnInput = await withMcpToolList(noted, (req) => activity(() => loadMcpToolsActivity()(req)));

  const mcpServers = input.config.mcp?.servers ?? [];
  const relist = mcpRelister((req) => activity(() => discoverActivity(mcpServers)(req)), { sessionId: input.sessionId, ...mcpScopeOf(input.config) }, mcpServers);
  // How the model is offered the tools: as the config says, as the session's earlier turns (or
  // this turn's earlier run) decided, or, on auto, as the first model call decides — its reply is
  // in history, so replay reads the same decision. Only activity inputs and results change: no patch.
  let toolMode = decidedToolMode(input.config.model, input.resume?.prepared?.toolMode ?? input.toolMode);
  const maxOutputTokens = limits.maxOutputTokens ?? DEFAULT_LIMITS.maxOutputTokens;
  // Structured output through finish: each model call names the output schema finish is offered with.
  const outputSchema = patches.outputFinish && input.config.output ? new OutputSchemaOffer(input.config.output.schema, messageStore) : undefined;
  const result = await runTurn(
    turnInput,
    {
      callModel: async (req) => {
        const reply = await callModel({
          ...req,
          ...(toolMode ? { toolMode } : { decideToolMode: true }),
          ...(maxOutputTokens ? { maxOutputTokens } : {}),
          ...(input.evalHumans ? { noStream: true } : {}),
          ...(outputSchema ? { outputSchema: outputSchema.ref() } : {}),
        });
        outputSchema?.delivered();
        if (!toolMode && reply.protocol?.decided) toolMode = reply.protocol.decided;
        return reply;
      },
      ...(mcpServers.length
        ? {
            rediscoverMcp: async (previous, only) => {
              try {
                return await relist(previous, only);
              } catch (err) {
                if (isCancellation(err)) throw err;
                return previous; // listing again failed: keep offering what the session had
              }
            },
          }
        : {}),
      compressContext: (req) => activity(() => compressContext(req)),
      // One tool execution; a failure after the activity's retries is a result the model sees.
      executeTool: subAgents.run(toolRunner(input, patches, events, waits.dropMcpQuestions, models, route)),
      ...(messageStore
        ? {
            storeValue: async (value: unknown) => (await activity(() => storeValue({ sessionId: input.sessionId, value }))).$blob,
          }
        : {}),
      isCancellation,
      runTogether: parallelToolCalls,
      cachePrefix,
      admitModelCall: (step, tokens) =>
        budget.admit(step, tokens, (pending, done, timeoutMs) => {
          events.add('wait');
          return waitForHuman(pending, done, timeoutMs);
        }),
      spent: () => budget.spent(),
      // Between steps, past the event budget: continue as new (Temporal warns at 10,240 events).
      shouldContinueAsNew: () => events.count >= (limits.turnEventBudget ?? TURN_EVENT_BUDGET_WHEN_UNSET),
      onStep: (step) => {
        state.step = step;
      },
      askUser: waits.askUser,
      awaitApprovals: waits.awaitApprovals,
      wait: (callId, args) => sleeper.wait(callId, args),
      steering,
    },
    loopOptions(turnInput, prepared, patches),
  );
  state.pending = undefined;
  // An update still in its handler (an approval arriving as the turn ends) gets its answer
  // before the turn closes; not cancellable, so a cancelled turn also ends cleanly.
  await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
  if (notifier && !('continueAsNew' in result)) notifier.ended(result);
  // The webhook deliveries started: started before the run closes (not delivered: they go on alone).
  if (notifier) await CancellationScope.nonCancellable(() => notifier.settled());
  if ('continueAsNew' in result) {
    // The same turn goes on in a new run: its id, queries, updates and the session's wait on it
    // all follow the chain of runs (with the tool mode this run used).
    const resume = { ...result.continueAsNew, ...route.resume() };
    const next = { ...input, resume: toolMode ? { ...resume, prepared: { ...resume.prepared, toolMode } } : resume };
    // A background child's next run keeps saying whose it is (its memo).
    const memo = input.subAgent?.background ? backgroundMemo() : undefined;
    return memo ? makeContinueAsNewFunc<typeof turnWorkflow>({ memo: { ...memo } })(next) : continueAsNew<typeof turnWorkflow>(next);
  }
  state.status = 'done';
  const hostFields = { ...(route.current ? { host: route.current } : {}), ...(route.moves.length ? { hostMoves: route.moves } : {}) };
  return { ...result, ...(toolMode ? { toolMode } : {}), ...hostFields };
}

/** The prepareTurn request of a turn's first run. */
function prepareRequest(input: TurnInput): PrepareTurnInput {
  const m = input.config.model;
  return {
    sessionId: input.sessionId,
    model: m.provider === 'scripted' ? { provider: 'scripted', model: m.model, script: m.script, ...(m.scriptKey ? { scriptKey: m.scriptKey } : {}) } : m,
    ...(input.config.memory ? { memory: input.config.memory } : {}),
    ...(input.config.skills?.folders.length ? { skillFolders: input.config.skills.folders } : {}),
    // The session's first turn lists the worker's custom tools (its agent's); later turns have them recorded.
    ...(input.customTools ? {} : { listCustomTools: true, ...(input.config.agent !== undefined ? { agent: input.config.agent } : {}) }),
  };
}

/** The input with its MCP tool set's list inline, where it came by reference (the resumed run's set first, as baseOptions reads it). */
async function withMcpToolList(input: TurnInput, load: Parameters<typeof withToolList>[2]): Promise<TurnInput> {
  const carried = input.resume?.mcpTools ?? input.mcpTools;
  const tools = await withToolList(carried, input.sessionId, load);
  if (tools === carried) return input;
  return input.resume?.mcpTools ? { ...input, resume: { ...input.resume, mcpTools: tools! } } : { ...input, mcpTools: tools! };
}

/** What the loop uses of prepareTurn's result (or of what the turn's first run kept of it). */
type Prepared = Pick<PrepareTurnResult, 'skillsIndex' | 'memories' | 'skillRules' | 'customTools'>;

/**
 * The loop's options for this run of the turn: the tools offered (built-in, custom, MCP), the
 * policy and rules, the system message's context, and the patches the loop reads.
 */
function loopOptions(
  input: TurnInput,
  prepared: Prepared,
  patches: Pick<TurnPatches, 'policy' | 'messageStore' | 'outputFinish'>,
): TurnOptions {
  const { policy, messageStore } = patches;
  const opts = baseOptions(input, prepared, policy, messageStore);
  return patches.outputFinish && input.config.output ? withOutputFinish(opts, input.config.output.schema) : opts;
}

function baseOptions(input: TurnInput, prepared: Prepared, policy: TurnPatches['policy'], messageStore: boolean): TurnOptions {
  // The custom tools this turn offers: the session's, or the list this (first) turn got. A list
  // that lacks a tool the session needs ends the turn before any model call, and is not kept:
  // the next message lists again (on a worker that has them, once one runs).
  const listed = input.customTools ? undefined : prepared?.customTools;
  const customTools = input.customTools ?? listed;
  const missing = input.customTools ? [] : missingTools(listed, input.config.tools?.required);
  const mcpServers = input.config.mcp?.servers ?? [];
  const mcpTools = input.resume?.mcpTools ?? input.mcpTools;
  const recorded = recordedEffectsOf(input);
  const agents = subAgentTools(input);
  return {
    policy,
    ...(mcpTools || customTools?.tools.length || agents.length ? { registry: turnRegistry(mcpTools, mcpServers, customTools, agents) } : {}),
    ...(mcpTools ? { mcp: { tools: mcpTools, registry: (t: McpToolSet) => turnRegistry(t, mcpServers, customTools, agents), rules: (t: McpToolSet) => mcpRules(t, mcpServers) } } : {}),
    ...(customTools ? { custom: { tools: customTools, listed: listed !== undefined && !missing.length } } : {}),
    ...(missing.length ? { refuse: missingToolsMessage(missing, listed) } : {}),
    context: {
      ...(prepared?.skillsIndex ? { skillsIndex: prepared.skillsIndex } : {}),
      ...(prepared?.memories?.length ? { memories: prepared.memories } : {}),
    },
    ...(prepared?.skillRules?.length ? { turnRules: prepared.skillRules } : {}),
    messageStore,
    ...(recorded ? { recorded } : {}),
  };
}
