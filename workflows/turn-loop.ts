/**
 * The ReAct step loop, independent of Temporal: the turn workflow runs it with activities,
 * the step benchmark runs it in-process. It must stay deterministic (no clocks, I/O, randomness).
 */
import type { ModelCallInput, ModelReply, ToolOutcome } from '../common/activity-types';
import { builtinRegistry } from '../common/builtin-tools';
import { EMPTY_CONVERSATION } from '../common/conversation';
import { rootCauseMessage, toolError, toolOk } from '../common/errors';
import type { Policy, Rule } from '../common/policy';
import type { CompressContextInput, CompressContextResult } from '../common/context/types';
import { limitTokens } from '../common/context/plan';
import { estimateTextTokens } from '../common/context/estimate';
import {
  addUsage,
  NO_USAGE,
  type ApprovalRecord,
  type PendingApproval,
  type PolicyRecord,
  type ToolCallRecord,
  type TurnInput,
  type TurnResult,
  type TurnResume,
  type TerminatedBy,
} from '../common/session';
import type { ToolRegistry } from '../common/tools';
import type { McpToolSet } from '../common/mcp';
import type { CustomToolSet } from '../common/custom-tools';
import type { ChatMessage, ToolCall } from '../common/types';
import { InlineConversation, StoredConversation, type TurnConversation } from './conversation';
import { buildSystemMessage, type TurnContext } from './system-message';
import { RepeatGuard } from './repeat-guard';
import { applyApproval, approvalRequest, assignCallIds, judgeStep, type JudgedCall } from './tool-calls';
import { droppedCallsNote } from './call-args';
import { rememberFact } from './working-memory';
import { resultSpend, resumeSpend, type Spent } from './turn-budget';

/** What the loop needs from the outside world. */
export interface TurnOps {
  callModel(input: ModelCallInput): Promise<ModelReply>;
  executeTool(call: {
    step: number;
    callId: string;
    name: string;
    args: unknown;
    timeoutMs: number;
    local: boolean;
    policy?: PolicyRecord;
    /** An MCP tool: its server, the name the server knows it by, and whether the server calls it idempotent. */
    mcp?: { server: string; tool: string; idempotent: boolean };
    /** A custom tool (defineTool), and whether it may run twice. */
    custom?: { idempotent: boolean };
  }): Promise<ToolOutcome>;
  /** Waits for a human answer; resolves `undefined` on timeout. */
  askUser(callId: string, question: string): Promise<string | undefined>;
  /** Waits for decisions on a step's asked calls; a missing entry counts as timed out. */
  awaitApprovals(calls: PendingApproval[]): Promise<Map<string, ApprovalRecord>>;
  /** Compresses the context (an activity); absent means never compress. */
  compressContext?(input: CompressContextInput): Promise<CompressContextResult>;
  /** Called before each model call so the host can expose progress. */
  onStep?(step: number): void;
  /** Whether an error means the turn was cancelled (then it ends as `cancelled`, keeping its work). */
  isCancellation?(err: unknown): boolean;
  /** Asked between steps (with the message store): true stops the run here to continue as new. */
  shouldContinueAsNew?(): boolean;
  /** Stores a value in the message store (with it: chunks of call records); returns its hash. */
  storeValue?(value: unknown): Promise<string>;
  /** Lists the tools of the MCP servers again (a server said its list changed). */
  rediscoverMcp?(previous: McpToolSet, servers: string[]): Promise<McpToolSet>;
  /** Before each model call, with the context's estimated tokens: why the turn stops (its budget ran out, nobody raised it), or undefined. */
  admitModelCall?(step: number, contextTokens: number): Promise<string | undefined>;
  /** What the turn spent so far, for its result and the run it continues in. */
  spent?(): Spent;
}

/** Call records kept in the turn's own state; older ones go to the store in chunks of this many. */
export const RECORDS_CHUNK = 32;

/** Options of a turn run. */
export interface TurnOptions {
  registry?: ToolRegistry;
  /** The permission policy; absent means every valid call is allowed (sessions from before policies). */
  policy?: Policy;
  /** Skills index and long-term memories for the system message. */
  context?: TurnContext;
  /** Allow rules that hold for this turn only (derived from the session's skills). */
  turnRules?: readonly Rule[];
  /**
   * Give each call the harness's own id (unique per turn, step and call) instead of the
   * provider's, which may be missing or repeat across steps. Off only for turns recorded before.
   */
  harnessCallIds?: boolean;
  /** Estimate tokens by script (CJK at one token a character) rather than 4 characters a token. */
  scriptAwareEstimate?: boolean;
  /** Hold the conversation by reference to the message store (every turn but those recorded before). */
  messageStore?: boolean;
  /** The session's MCP tools (already part of `registry`), and how to build the registry again when they change. */
  mcp?: { tools: McpToolSet; registry(tools: McpToolSet): ToolRegistry; rules(tools: McpToolSet): Rule[] };
  /** Bound what model text may cost the workflow (argument depth, echoed text, fingerprints); off only for turns recorded before. */
  boundedInput?: boolean;
  /** The session's custom tools (already part of `registry`); `listed`: this turn listed them, and its result hands them to the session. */
  custom?: { tools: CustomToolSet; listed: boolean };
  /** Why the turn cannot run at all (tools the session needs are missing): it ends `failed` before any model call. */
  refuse?: string;
}

/** A run that stopped between steps to continue as new, with where it stopped. */
export interface TurnContinuation {
  continueAsNew: TurnResume;
}

/** Runs one turn to termination (or to a continue-as-new point) and returns its result. Tool failures never throw. */
export async function runTurn(input: TurnInput, ops: TurnOps, opts: TurnOptions = {}): Promise<TurnResult | TurnContinuation> {
  let registry = opts.registry ?? builtinRegistry();
  // MCP tools a server re-listed during this turn (kept by the session for later turns).
  // (opts.registry and opts.mcp.tools already hold the list a previous run of the turn re-listed.)
  let mcpTools = opts.mcp?.tools;
  let mcpChanged = input.resume?.mcpTools !== undefined;
  const { limits } = input.config;
  const maxSteps = input.maxSteps ?? limits.maxSteps;
  const r = input.resume;
  const memory = { ...(r?.memory ?? input.memory) };
  const sessionRules: Rule[] = [...(r?.sessionRules ?? input.sessionRules ?? [])];
  const compressions = [...(r?.compressions ?? [])];
  const toolCalls: ToolCallRecord[] = [...(r?.toolCalls ?? [])];
  const storedToolCalls: string[] = [...(r?.storedToolCalls ?? [])];
  const repeat = new RepeatGuard(limits.repeatLimit, r?.repeat, opts.boundedInput);
  let usage = r?.usage ?? NO_USAGE;
  let modelCalls = r?.modelCalls ?? 0;
  // Attempts beyond the first of the turn's model calls (a rate-limited endpoint shows here).
  let retriedAttempts = r?.retriedAttempts ?? 0;
  let failedSteps = r?.failedSteps ?? 0;
  let lastContent = r?.lastContent ?? '';
  const conversation = startConversation(input, opts);
  // Calls of the current step without a result yet (a cancellation answers them with an error).
  let open: ToolCall[] = [];

  const done = (terminated_by: TerminatedBy, answer: string, steps: number, error?: string): TurnResult => ({
    sessionId: input.sessionId,
    turnId: input.turnId,
    turn: input.turn,
    answer,
    terminated_by,
    steps,
    usage,
    ...conversation.outcome(),
    ...(compressions.length ? { compressions } : {}),
    memory,
    modelCalls,
    toolCalls,
    ...(storedToolCalls.length ? { storedToolCalls } : {}),
    sessionRules,
    ...(mcpChanged && mcpTools ? { mcpTools } : {}),
    ...(opts.custom?.listed ? { customTools: opts.custom.tools } : {}),
    ...(retriedAttempts ? { retriedAttempts } : {}),
    ...(error ? { error } : {}),
    ...resultSpend(ops.spent?.()),
  });
  const addResult = (callId: string, outcome: ToolOutcome) => {
    conversation.addResult(callId, outcome);
    open = open.filter((c) => c.id !== callId);
  };

  const first = r?.step ?? 1;
  let step = first;
  if (opts.refuse) return done('failed', `The turn could not start: ${opts.refuse}`, 0, opts.refuse);
  try {
    return await loop();
  } catch (err) {
    if (!ops.isCancellation?.(err)) throw err;
    for (const c of open) addResult(c.id, toolError('EXECUTION_ERROR', 'The turn was cancelled before this call finished.', { recoverable: false }));
    return done('cancelled', lastContent || 'The turn was cancelled.', step);
  }

  async function loop(): Promise<TurnResult | TurnContinuation> {
    for (step = first; step <= maxSteps; step++) {
      if (step > first && conversation instanceof StoredConversation && ops.shouldContinueAsNew?.()) {
        return { continueAsNew: resumeAt(step, conversation) };
      }
      ops.onStep?.(step);
      const system = buildSystemMessage(input.config.systemPrompt, memory, opts.context);
      // What identifies this step's model traffic (a compression and the call share the index).
      const call = () => ({
        sessionId: input.sessionId,
        turnId: input.turnId,
        step,
        callIndex: input.modelCallBase + modelCalls,
        model: modelRef(input),
        ...conversation.context(system),
      });
      const compression = input.config.compression;
      if (compression && ops.compressContext && conversation.estimate(system) > limitTokens(compression)) {
        try {
          // Once over the threshold, compress fully (compact every big result, summarise the
          // middle): stopping just under the threshold would trigger again a step later.
          const c = await ops.compressContext({ ...call(), config: compression, force: true });
          if (conversation.compressed(c)) {
            const { before_tokens, after_tokens, summarized_messages, compacted_tool_results } = c;
            compressions.push({ step, before_tokens, after_tokens, summarized_messages, compacted_tool_results });
          }
        } catch (err) {
          // A failed compression is not a failed turn: go on with the full context. A
          // cancellation is not a failure: it ends the turn.
          if (ops.isCancellation?.(err)) throw err;
        }
      }
      const refused = ops.admitModelCall && (await ops.admitModelCall(step, conversation.estimate(system)));
      if (refused) return done('budget_exceeded', refused, step - 1);
      let reply: ModelReply;
      try {
        reply = await ops.callModel({
          ...call(),
          tools: registry.names(),
          ...(mcpTools?.ref ? { mcpTools: mcpTools.ref } : {}),
          ...(opts.custom?.tools.ref ? { customTools: opts.custom.tools.ref } : {}),
          ...(conversation instanceof StoredConversation ? { callIdPrefix: `t${input.turn}-s${step}` } : {}),
        });
      } catch (err) {
        if (ops.isCancellation?.(err)) throw err;
        // ops.callModel throws only once retries are spent or the error is permanent.
        const why = rootCauseMessage(err);
        return done('failed', `The model call failed: ${why}`, step, why);
      }
      modelCalls++;
      retriedAttempts += Math.max(0, (reply.attempt ?? 1) - 1);
      usage = addUsage(usage, reply.usage);
      lastContent = reply.content ?? lastContent;
      // With the store the activity gave the harness ids already (the stored message has them).
      const calls = opts.harnessCallIds && !reply.conversation ? assignCallIds(reply.toolCalls, input.turn, step) : reply.toolCalls;
      conversation.replied(reply, { role: 'assistant', content: reply.content, ...(calls.length ? { tool_calls: calls } : {}) });
      if (calls.length === 0) return done('final_answer', reply.content ?? '', step);
      open = [...calls];

      const verdict = repeat.observe(calls);
      if (verdict === 'stop') {
        for (const c of calls) addResult(c.id, toolError('REPEATED_ACTION', 'Stopped: the same call was repeated after a warning.', { recoverable: false }));
        return done('repeated_action', lastContent || 'Stopped: the same action was repeated.', step);
      }

      const mcpDecisions = mcpTools && opts.mcp ? opts.mcp.rules(mcpTools) : [];
      const rules = opts.turnRules?.length || mcpDecisions.length ? [...sessionRules, ...(opts.turnRules ?? []), ...mcpDecisions] : sessionRules;
      const judged = judgeStep(calls, registry, opts.policy, rules, opts.boundedInput);
      const asked = judged.filter((j) => !j.result && j.policy?.decision === 'ask');
      if (asked.length) {
        const outcomes = await ops.awaitApprovals(asked.map(approvalRequest));
        for (const j of asked) {
          const rule = applyApproval(j, outcomes.get(j.call.id) ?? { approved: false, timedOut: true }, opts.policy);
          if (rule) sessionRules.push(rule);
        }
      }

      let finishAnswer: string | undefined;
      let anyOk = false;
      let anyFailed = false;
      const relist = new Set<string>();
      for (const j of judged) {
        const result = j.result ?? (await run(j, step));
        if ((result as ToolOutcome).mcpListChanged && j.def?.source.startsWith('mcp:')) relist.add(j.def.source.slice(4));
        if (j.call.name === 'finish' && result.ok) finishAnswer = (j.args as { answer: string }).answer;
        anyOk ||= result.ok;
        anyFailed ||= !result.ok;
        toolCalls.push(record(j, step, result));
        addResult(j.call.id, result);
      }
      if (finishAnswer !== undefined) return done('finish', finishAnswer, step);
      // A server said its tool list changed: the next step offers what it lists now.
      if (relist.size && mcpTools && opts.mcp && ops.rediscoverMcp) {
        mcpTools = await ops.rediscoverMcp(mcpTools, [...relist]);
        registry = opts.mcp.registry(mcpTools);
        mcpChanged = true;
      }
      // A long turn's records go to the store in chunks, so its state and result stay small.
      if (conversation instanceof StoredConversation && ops.storeValue && toolCalls.length >= 2 * RECORDS_CHUNK) {
        storedToolCalls.push(await ops.storeValue(toolCalls.splice(0, RECORDS_CHUNK)));
      }
      // The model activity keeps a bounded number of a reply's calls; the model hears of the rest.
      if (reply.droppedCalls) conversation.add({ role: 'user', content: droppedCallsNote(calls.length, reply.droppedCalls) });
      if (verdict === 'warn') conversation.add({ role: 'user', content: repeat.warning(calls) });
      failedSteps = anyFailed && !anyOk ? failedSteps + 1 : 0;
      if (failedSteps >= limits.errorLimit) {
        return done('error_limit', lastContent || `Stopped after ${failedSteps} consecutive failed steps.`, step);
      }
    }
    return done('max_steps', lastContent || `Stopped after ${maxSteps} steps without a final answer.`, maxSteps);
  }

  /** Where to go on from in a new run: everything the loop holds, between steps. */
  function resumeAt(next: number, c: StoredConversation): TurnResume {
    return {
      step: next,
      usage,
      modelCalls,
      ...(retriedAttempts ? { retriedAttempts } : {}),
      failedSteps,
      lastContent,
      repeat: repeat.state(),
      memory,
      sessionRules,
      compressions,
      toolCalls,
      storedToolCalls,
      conversation: c.snapshot(),
      ...(mcpChanged && mcpTools ? { mcpTools } : {}),
      ...resumeSpend(ops.spent?.()),
      prepared: {
        ...(opts.context?.skillsIndex ? { skillsIndex: opts.context.skillsIndex } : {}),
        ...(opts.context?.memories?.length ? { memories: opts.context.memories } : {}),
        ...(opts.turnRules?.length ? { skillRules: [...opts.turnRules] } : {}),
        ...(opts.custom?.listed ? { customTools: opts.custom.tools } : {}),
      },
    };
  }

  /** Runs an admitted call: workflow-local tools here, the rest through ops.executeTool. */
  async function run(j: JudgedCall, step: number): Promise<ToolOutcome> {
    const def = j.def!;
    const args = j.args as Record<string, unknown>;
    if (def.runsIn !== 'workflow') {
      const local = def.runsIn === 'local_activity';
      const mcp = def.mcpTool !== undefined && def.source.startsWith('mcp:') ? { mcp: { server: def.source.slice(4), tool: def.mcpTool, idempotent: def.annotations?.idempotentHint === true || def.annotations?.readOnlyHint === true } } : {};
      const custom = def.source === 'custom' ? { custom: { idempotent: def.idempotent === true } } : {};
      return ops.executeTool({ step, callId: j.call.id, name: def.name, args, timeoutMs: def.timeoutMs, local, ...(j.policy ? { policy: j.policy } : {}), ...mcp, ...custom });
    }
    switch (def.name) {
      case 'finish':
        return toolOk({ finished: true });
      case 'remember': {
        const { key, value } = args as { key: string; value: string };
        return rememberFact(memory, key, value, opts.boundedInput === true);
      }
      case 'ask_user': {
        const answer = await ops.askUser(j.call.id, (args as { question: string }).question);
        if (answer !== undefined) return toolOk({ answer });
        return toolError('USER_TIMEOUT', 'The user did not answer in time.', {
          suggestion: 'Continue with what you know, or finish and say what is missing.',
        });
      }
      default:
        return toolError('UNKNOWN_TOOL', `Tool "${def.name}" has no workflow implementation.`, { recoverable: false });
    }
  }
}

/**
 * The turn's conversation: continued from where a previous run stopped; by reference to the
 * message store (sessions from before it hand over their messages as pending, stored by the
 * first model call); or inline, for turns recorded before the store.
 */
function startConversation(input: TurnInput, opts: TurnOptions): TurnConversation {
  const user: ChatMessage = { role: 'user', content: input.userMessage };
  if (input.resume) return new StoredConversation(input.resume.conversation);
  if (opts.messageStore) {
    const start = input.conversation ?? EMPTY_CONVERSATION;
    const c = new StoredConversation(start);
    for (const m of input.history) c.add(m);
    c.add(user);
    return c;
  }
  const c = new InlineConversation(input.history, opts.scriptAwareEstimate ? estimateTextTokens : quarterChars);
  c.add(user);
  return c;
}

// A record keeps arguments up to this size whole (the store and the model call's history have them all).
const RECORD_ARGS_MAX = 1024;

function record(j: JudgedCall, step: number, result: ToolOutcome): ToolCallRecord {
  const json = JSON.stringify(j.args) ?? '';
  return {
    step,
    callId: j.call.id,
    name: j.call.name,
    // Records travel with the turn (and every run of a long one): large arguments by preview.
    args: json.length > RECORD_ARGS_MAX ? { $preview: json.slice(0, RECORD_ARGS_MAX / 2), bytes: json.length } : j.args,
    ok: result.ok,
    ...(result.error_type ? { error_type: result.error_type } : {}),
    ...(j.policy ? { policy: j.policy } : {}),
    ...(j.approval ? { approval: j.approval } : {}),
  };
}

/** The estimate turns recorded before script-aware counting used: 4 characters a token. */
function quarterChars(text: string): number {
  return text.length / 4;
}

function modelRef(input: TurnInput): ModelCallInput['model'] {
  const m = input.config.model;
  return m.provider === 'openai'
    ? { provider: 'openai', model: m.model, ...(m.baseUrl ? { baseUrl: m.baseUrl } : {}) }
    : { provider: 'scripted', model: m.model };
}
