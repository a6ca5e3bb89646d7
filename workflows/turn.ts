/** turnWorkflow: one user turn, the ReAct loop driven by activities, waiting on humans durably. */
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  currentUpdateInfo,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { ExecuteToolInput, ToolOutcome } from '../common/activity-types';
import { rootCauseMessage, toolError } from '../common/errors';
import { parsePolicy } from '../common/policy/schema';
import { exactPolicy } from '../common/policy/decide';
import { grantsOf } from './grants';
import { DEFAULT_LIMITS, type ApprovalRecord, type TurnInput, type TurnResult, type TurnState } from '../common/session';
import {
  answerUpdate,
  decideApprovalsUpdate,
  turnStateQuery,
  turnStatusSignal,
  MAX_MESSAGE_BYTES,
  utf8Length,
  type ApprovalDecisionInput,
  type TurnStatusSignal,
} from '../common/messages';
import { runTurn } from './turn-loop';
import { TurnBudget } from './turn-budget';
import { RunEvents } from './run-events';
import { evalDecision } from './eval-humans';
import { discoverActivity, executeTool, executeToolLocally, mcpActivity, mcpLocalActivity, prepareTurn, storeValue, toolActivity, type Activities } from './tool-activities';
import { mcpRules } from '../common/mcp-tools';
import { missingTools, missingToolsMessage } from '../common/custom-tools';
import { alwaysPatternProblem } from '../common/policy/always';
import type { Policy } from '../common/policy/schema';
import { turnRegistry } from './mcp';
import { mcpAnswerQuery, mcpQuestionSignal, type McpQuestion } from '../common/messages';
import { questionText, validateMcpAnswer } from '../common/mcp-questions';
import { decidedToolMode } from '../common/tool-mode';

/** Runs one turn of a session and returns its result; failures of the model end it as `failed`. */
export async function turnWorkflow(input: TurnInput): Promise<TurnResult> {
  const { limits } = input.config;
  const { callModel: callModelActivity } = proxyActivities<Activities>({
    startToCloseTimeout: limits.modelTimeoutMs,
    heartbeatTimeout: limits.modelHeartbeatMs,
    retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: limits.modelMaxAttempts },
  });
  // Every model call and compression is charged to the turn's spend as it returns; with a budget,
  // each model call is checked against it first (workflows/turn-budget.ts).
  const budget = new TurnBudget(input);
  const callModel = budget.charging(callModelActivity);
  // Sessions recorded before the permission policy existed replay without it.
  const recordedPolicy = patched('permission-policy') ? (input.config.policy ?? parsePolicy(undefined)) : undefined;
  // Turns recorded before the exact analysis judged with their policy's own version (which let
  // dash read what the policy parsed as bash); every turn since judges with version 3.
  const policy = recordedPolicy && patched('policy-exact') ? exactPolicy(recordedPolicy) : recordedPolicy;
  // Turns recorded before local activities ran every tool as a regular activity.
  const localTools = patched('local-fast-tools');
  const { compressContext: compressActivity } = proxyActivities<Activities>({
    startToCloseTimeout: limits.modelTimeoutMs,
    retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumAttempts: 3 },
  });
  const compressContext = budget.chargingCompression(compressActivity);
  // Turns recorded before compression existed never compressed.
  const compression = patched('context-compression');
  // Turns recorded before these used the provider's call ids, a fixed tool timeout, let a tool
  // activity that failed after its retries fail the turn, and estimated 4 characters a token.
  const harnessCallIds = patched('harness-call-ids');
  const perToolTimeouts = patched('per-tool-timeouts');
  const toolFailuresAsResults = patched('tool-failures-as-results');
  const scriptAwareEstimate = patched('script-aware-token-estimate');
  // Turns recorded before the message store carried the conversation inline.
  const messageStore = patched('message-store') && !input.config.inlineHistory;

  // Turns recorded before the count decided from Temporal's history length instead.
  const ownEventCount = patched('turn-own-event-count');
  const events = new RunEvents(input.resume !== undefined);
  const state: TurnState = { turnId: input.turnId, status: 'running', step: 0 };
  const answers = new Map<string, string>();
  const decisions = new Map<string, ApprovalRecord>();
  // Questions MCP servers asked during calls, by key; their answers go to `answers` under the key.
  const mcpQuestions = new Map<string, McpQuestion>();
  let askedInEval = 0;
  setHandler(turnStateQuery, () => state);
  setHandler(mcpAnswerQuery, (key) => answers.get(key));
  setHandler(mcpQuestionSignal, async (q) => {
    events.add('message');
    // A retried attempt asking the same question again reads the answer already given.
    if (answers.has(q.key) || mcpQuestions.has(q.key)) return;
    mcpQuestions.set(q.key, q);
    state.status = 'waiting_for_user';
    state.pending = { kind: 'question', callId: q.key, question: questionText(q) };
    await notifyParent({ turnId: input.turnId, status: state.status, pending: state.pending });
  });
  setHandler(
    answerUpdate,
    async (a) => {
      events.add('message');
      // Who answered is the client identity in this update's history event, not a field of it.
      const callId = state.pending!.kind === 'question' ? state.pending!.callId : '';
      answers.set(callId, a.text);
      state.pending = undefined;
      state.status = 'running';
      // An MCP server's question: the call goes on in its activity; tell the session we run again.
      if (mcpQuestions.has(callId)) await notifyParent({ turnId: input.turnId, status: 'running' });
      return { accepted: true as const, callId };
    },
    {
      validator: (a) => {
        const p = state.pending;
        if (!p || p.kind !== 'question') throw new Error('no question is pending in this turn');
        if (a.callId && a.callId !== p.callId) throw new Error(`no pending question has call id ${a.callId}`);
        if (typeof a.text !== 'string' || a.text.trim() === '') throw new Error('the answer must be non-empty text');
        // The answer becomes part of the conversation every later model call carries.
        if (utf8Length(a.text) > MAX_MESSAGE_BYTES) throw new Error(`the answer is more than ${MAX_MESSAGE_BYTES / 1024} KiB of UTF-8 text`);
        const q = mcpQuestions.get(p.callId);
        if (q) validateMcpAnswer(q, a.text);
      },
    },
  );
  setHandler(
    decideApprovalsUpdate,
    async (d) => {
      events.add('message');
      const pending = state.pending!.kind === 'approvals' ? state.pending!.calls : [];
      // Updates recorded before approval binding named ids only, or nothing for "all pending".
      const ids = d.calls?.length ? d.calls.map((c) => c.callId) : d.callIds?.length ? d.callIds : pending.map((c) => c.callId);
      // Who decided and when are the identity and time the server recorded in this update's
      // event; the record points at it rather than trusting fields the client filled in.
      const updateId = currentUpdateInfo()?.id;
      for (const id of ids) {
        decisions.set(id, {
          approved: d.approve,
          ...(updateId ? { updateId } : {}),
          ...(d.reason ? { reason: d.reason } : {}),
          ...(d.always ? { always: true } : {}),
          ...(d.always && d.pattern !== undefined ? { pattern: d.pattern } : {}),
        });
      }
      const left = pending.filter((c) => !decisions.has(c.callId));
      state.pending = left.length ? { kind: 'approvals', calls: left } : undefined;
      if (!left.length) state.status = 'running';
      // Keep the session's view in step when only part of the step was decided.
      else if (patched('approvals-partial-notify')) await notifyParent({ turnId: input.turnId, status: 'waiting_for_approval', pending: state.pending! });
      // What each `--always` adds to the session, said back to the person who gave it.
      const granted = d.always ? grantsOf(pending.filter((c) => ids.includes(c.callId)), policy, d.pattern) : [];
      return granted.length ? { decided: ids, granted } : { decided: ids };
    },
    {
      validator: (d) => validateDecision(state.pending, d, policy),
    },
  );

  const m = input.config.model;
  // A run that continues a long turn keeps what the turn's first run prepared.
  const prepared =
    input.resume?.prepared ??
    (await prepareTurn({
      sessionId: input.sessionId,
      model: m.provider === 'scripted' ? { provider: 'scripted', model: m.model, script: m.script } : m,
      ...(input.config.memory ? { memory: input.config.memory } : {}),
      ...(input.config.skills?.folders.length ? { skillFolders: input.config.skills.folders } : {}),
      // The session's first turn lists the worker's custom tools; later turns have them recorded.
      ...(input.customTools ? {} : { listCustomTools: true }),
    }));
  // The custom tools this turn offers: the session's, or the list this (first) turn got. A list
  // that lacks a tool the session needs ends the turn before any model call, and is not kept:
  // the next message lists again (on a worker that has them, once one runs).
  const listed = input.customTools ? undefined : prepared?.customTools;
  const customTools = input.customTools ?? listed;
  const missing = input.customTools ? [] : missingTools(listed, input.config.tools?.required);

  const waitForHuman = async (pending: NonNullable<TurnState['pending']>, done: () => boolean, timeoutMs: number): Promise<boolean> => {
    state.status = pending.kind === 'question' ? 'waiting_for_user' : pending.kind === 'budget' ? 'waiting_for_budget' : 'waiting_for_approval';
    state.pending = pending;
    await notifyParent({ turnId: input.turnId, status: state.status, pending });
    const ok = await condition(done, timeoutMs);
    state.status = 'running';
    state.pending = undefined;
    await notifyParent({ turnId: input.turnId, status: 'running' });
    return ok;
  };

  /** One tool execution; a failure after the activity's retries is a result the model sees. */
  const mcpServers = input.config.mcp?.servers ?? [];
  /** A call whose activity failed (its worker lost) leaves no question of its server pending. */
  const dropMcpQuestions = async (callId: string) => {
    const p = state.pending;
    if (p?.kind !== 'question' || !p.callId.startsWith(`${callId}#e`)) return;
    state.pending = undefined;
    state.status = 'running';
    await notifyParent({ turnId: input.turnId, status: 'running' });
  };
  const runTool = async ({ local, mcp, ...call }: Parameters<Parameters<typeof runTurn>[1]['executeTool']>[0]): Promise<ToolOutcome> => {
    const server = mcp && mcpServers.find((s) => s.name === mcp.server);
    const activity = server
      ? mcpActivity(call.timeoutMs, limits.askUserTimeoutMs, mcp!.idempotent)
      : local && localTools
        ? executeToolLocally
        : perToolTimeouts
          ? toolActivity(call.timeoutMs)
          : executeTool;
    const req: ExecuteToolInput = {
      sessionId: input.sessionId,
      turnId: input.turnId,
      ...call,
      ...(server ? { mcp: { server, tool: mcp!.tool, askUserTimeoutMs: limits.askUserTimeoutMs } } : {}),
      ...(messageStore ? { store: true } : {}),
      ...(input.config.memory ? { namespace: input.config.memory.namespace } : {}),
      ...(input.config.network?.allowPrivateHosts.length ? { allowPrivateHosts: input.config.network.allowPrivateHosts } : {}),
    };
    try {
      // Tools the server calls idempotent run as local activities (no server round trip, so an
      // MCP step costs what a built-in one does); one that asks the user or is slow runs again
      // as a regular activity, which a retry of an idempotent tool allows.
      if (server && mcp!.idempotent) {
        try {
          events.add('local');
          return await mcpLocalActivity(call.timeoutMs)(req);
        } catch (err) {
          // Sent back (a question, a slow call), or the local attempts failed: the activity decides.
          if (isCancellation(err)) throw err;
        }
      }
      events.add(activity === executeToolLocally ? 'local' : 'activity');
      return await activity(req);
    } catch (err) {
      if (!toolFailuresAsResults || isCancellation(err)) throw err;
      const type = call.name === 'run_shell' ? 'SANDBOX_UNAVAILABLE' : server ? 'MCP_SERVER_UNAVAILABLE' : 'EXECUTION_ERROR';
      // An MCP tool not retried (the server does not call it idempotent), or a custom one that is
      // not idempotent (its claim stops a second run): it may have run before the loss.
      const unsure = (server && !mcp!.idempotent) || call.custom?.idempotent === false ? ' (it may or may not have taken effect: check before calling it again)' : '';
      return toolError(type, `${call.name} could not be run: ${rootCauseMessage(err)}${unsure}`, {
        suggestion: 'the tool infrastructure failed, not your call: try again later, or continue another way',
      });
    } finally {
      // A question the server asked during the call cannot be answered once the call is over.
      if (server) await dropMcpQuestions(call.callId);
    }
  };

  const mcpTools = input.resume?.mcpTools ?? input.mcpTools;
  // Turns recorded before model input was bounded (argument depth, MCP schema cost and patterns,
  // echoed text, fingerprint size) judged calls without those bounds (issue 17).
  const boundedInput = patched('bounded-model-input');
  // How the model is offered the tools: as the config says, as the session's earlier turns (or
  // this turn's earlier run) decided, or, on auto, as the first model call decides — its reply is
  // in history, so replay reads the same decision. Only activity inputs and results change: no patch.
  let toolMode = decidedToolMode(input.config.model, input.resume?.prepared?.toolMode ?? input.toolMode);
  const maxOutputTokens = limits.maxOutputTokens ?? DEFAULT_LIMITS.maxOutputTokens;
  const result = await runTurn(
    input,
    {
      callModel: async (req) => {
        events.add('activity');
        const reply = await callModel({ ...req, ...(toolMode ? { toolMode } : { decideToolMode: true }), ...(maxOutputTokens ? { maxOutputTokens } : {}) });
        if (!toolMode && reply.protocol?.decided) toolMode = reply.protocol.decided;
        return reply;
      },
      ...(mcpServers.length
        ? {
            rediscoverMcp: async (previous, only) => {
              try {
                events.add('activity');
                return await discoverActivity(mcpServers)({ sessionId: input.sessionId, servers: mcpServers, only, previous });
              } catch (err) {
                if (isCancellation(err)) throw err;
                return previous; // listing again failed: keep offering what the session had
              }
            },
          }
        : {}),
      ...(compression
        ? {
            compressContext: (req) => {
              events.add('activity');
              return compressContext(req);
            },
          }
        : {}),
      executeTool: runTool,
      ...(messageStore
        ? {
            storeValue: async (value: unknown) => {
              events.add('activity');
              return (await storeValue({ sessionId: input.sessionId, value })).$blob;
            },
          }
        : {}),
      isCancellation,
      admitModelCall: (step, tokens) =>
        budget.admit(step, tokens, (pending, done, timeoutMs) => {
          events.add('wait');
          return waitForHuman(pending, done, timeoutMs);
        }),
      spent: () => budget.spent(),
      // Between steps, past the event budget: continue as new (Temporal warns at 10,240 events).
      shouldContinueAsNew: () => {
        const budget = limits.turnEventBudget ?? DEFAULT_LIMITS.turnEventBudget!;
        if (ownEventCount) return events.count >= budget;
        const info = workflowInfo();
        return info.continueAsNewSuggested || info.historyLength >= budget;
      },
      onStep: (step) => {
        state.step = step;
      },
      askUser: async (callId, question) => {
        // An eval trial answers from its case, in order; none left is the user not answering.
        if (input.evalHumans) return input.evalHumans.answers[askedInEval++];
        events.add('wait');
        const answered = await waitForHuman({ kind: 'question', callId, question }, () => answers.has(callId), limits.askUserTimeoutMs);
        return answered ? answers.get(callId) : undefined;
      },
      awaitApprovals: async (calls) => {
        // A rerun decides the calls its record decided, as they were decided: nobody is asked again.
        for (const c of calls) {
          const d = input.recordedDecisions?.find((r) => r.digest === c.digest);
          if (d && !decisions.has(c.callId)) decisions.set(c.callId, { approved: d.approved, fromRecord: d.from, ...(d.reason ? { reason: d.reason } : {}) });
          else if (input.evalHumans && !decisions.has(c.callId)) decisions.set(c.callId, evalDecision(input.evalHumans.approvals, c));
        }
        if (!(input.recordedDecisions || input.evalHumans) || !calls.every((c) => decisions.has(c.callId))) {
          events.add('wait');
          await waitForHuman({ kind: 'approvals', calls }, () => calls.every((c) => decisions.has(c.callId)), limits.approvalTimeoutMs);
        }
        const out = new Map<string, ApprovalRecord>();
        for (const c of calls) out.set(c.callId, decisions.get(c.callId) ?? { approved: false, timedOut: true });
        return out;
      },
    },
    {
      ...(policy ? { policy } : {}),
      ...(mcpTools || customTools?.tools.length ? { registry: turnRegistry(mcpTools, mcpServers, boundedInput, customTools) } : {}),
      ...(mcpTools ? { mcp: { tools: mcpTools, registry: (t: typeof mcpTools) => turnRegistry(t, mcpServers, boundedInput, customTools), rules: (t: typeof mcpTools) => mcpRules(t, mcpServers) } } : {}),
      ...(customTools ? { custom: { tools: customTools, listed: listed !== undefined && !missing.length } } : {}),
      ...(missing.length ? { refuse: missingToolsMessage(missing, listed) } : {}),
      context: {
        ...(prepared?.skillsIndex ? { skillsIndex: prepared.skillsIndex } : {}),
        ...(prepared?.memories?.length ? { memories: prepared.memories } : {}),
      },
      ...(prepared?.skillRules?.length ? { turnRules: prepared.skillRules } : {}),
      harnessCallIds,
      scriptAwareEstimate,
      messageStore,
      boundedInput,
    },
  );
  state.pending = undefined;
  // An update still in its handler (an approval arriving as the turn ends) gets its answer
  // before the turn closes; not cancellable, so a cancelled turn also ends cleanly.
  await CancellationScope.nonCancellable(() => condition(allHandlersFinished));
  if ('continueAsNew' in result) {
    // The same turn goes on in a new run: its id, queries, updates and the session's wait on it
    // all follow the chain of runs (with the tool mode this run used).
    const resume = result.continueAsNew;
    return continueAsNew<typeof turnWorkflow>({ ...input, resume: toolMode ? { ...resume, prepared: { ...resume.prepared, toolMode } } : resume });
  }
  state.status = 'done';
  return toolMode ? { ...result, toolMode } : result;
}


/** Refuses a decision that does not match what is pending, before anything is written to history. */
function validateDecision(p: TurnState['pending'], d: ApprovalDecisionInput, policy: Policy | undefined): void {
  if (!p || p.kind !== 'approvals') throw new Error('no approval is pending in this turn');
  if (typeof d?.approve !== 'boolean') throw new Error('approve must be true or false');
  const pendingList = p.calls.map((c) => c.callId).join(', ');
  if (!Array.isArray(d.calls) || d.calls.length === 0) {
    throw new Error(`name each call you decide with the digest you were shown (pending: ${pendingList}); update the client`);
  }
  const seen = new Set<string>();
  for (const c of d.calls) {
    if (seen.has(c?.callId)) throw new Error(`call ${c.callId} is named twice`);
    seen.add(c?.callId);
    const open = p.calls.find((x) => x.callId === c?.callId);
    if (!open) throw new Error(`call ${c?.callId} is not pending (unknown or already decided); pending: ${pendingList}`);
    if (open.digest && c.digest !== open.digest) {
      throw new Error(`call ${c.callId} is not the call you were shown (its tool or arguments differ); look again with \`harness status\``);
    }
  }
  if (d.always && !d.approve) throw new Error('--always only goes with an approval');
  if (d.pattern !== undefined) {
    if (!d.always) throw new Error('a pattern only goes with --always');
    if (policy?.version !== 3) throw new Error('this turn cannot grant a pattern; approve with --always alone');
    for (const c of d.calls) {
      const open = p.calls.find((x) => x.callId === c.callId)!;
      const problem = typeof d.pattern === 'string' ? alwaysPatternProblem({ tool: open.tool, risk: open.risk, args: open.args as Record<string, unknown> }, d.pattern) : 'the pattern must be text';
      if (problem) throw new Error(`call ${c.callId}: ${problem}`);
    }
  }
}

/** Tells the parent session about a wait; a turn started on its own has no parent to tell. */
async function notifyParent(status: TurnStatusSignal): Promise<void> {
  const parent = workflowInfo().parent;
  if (!parent) return;
  await getExternalWorkflowHandle(parent.workflowId).signal(turnStatusSignal, status);
}
