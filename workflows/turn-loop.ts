/**
 * The ReAct step loop, independent of Temporal: the turn workflow runs it with activities,
 * the step benchmark runs it in-process. It must stay deterministic (no clocks, I/O, randomness).
 */
import type { ModelCallInput, ModelReply } from '../common/activity-types';
import { builtinRegistry } from '../common/builtin-tools';
import { rootCauseMessage, toolError, toolOk } from '../common/errors';
import type { Policy, Rule } from '../common/policy';
import type { CompressContextInput, CompressResult } from '../common/context/types';
import { limitTokens } from '../common/context/plan';
import { estimateTextTokens } from '../common/context/estimate';
import {
  addUsage,
  type ApprovalRecord,
  type CompressionRecord,
  type PendingApproval,
  type PolicyRecord,
  type ToolCallRecord,
  type TurnInput,
  type TurnResult,
  type TerminatedBy,
} from '../common/session';
import type { ToolRegistry } from '../common/tools';
import type { ChatMessage, ToolResult } from '../common/types';
import { buildSystemMessage, type TurnContext } from './system-message';
import { RepeatGuard } from './repeat-guard';
import { applyApproval, approvalRequest, assignCallIds, judgeCall, type JudgedCall } from './tool-calls';

/** What the loop needs from the outside world. */
export interface TurnOps {
  callModel(input: ModelCallInput): Promise<ModelReply>;
  executeTool(call: { step: number; callId: string; name: string; args: unknown; timeoutMs: number; local: boolean; policy?: PolicyRecord }): Promise<ToolResult>;
  /** Waits for a human answer; resolves `undefined` on timeout. */
  askUser(callId: string, question: string): Promise<string | undefined>;
  /** Waits for decisions on a step's asked calls; a missing entry counts as timed out. */
  awaitApprovals(calls: PendingApproval[]): Promise<Map<string, ApprovalRecord>>;
  /** Compresses the context (an activity); absent means never compress. */
  compressContext?(input: CompressContextInput): Promise<CompressResult>;
  /** Called before each model call so the host can expose progress. */
  onStep?(step: number): void;
  /** Whether an error means the turn was cancelled (then it ends as `cancelled`, keeping its work). */
  isCancellation?(err: unknown): boolean;
}

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
}

/** Runs one turn to termination and returns its result. Tool failures never throw. */
export async function runTurn(input: TurnInput, ops: TurnOps, opts: TurnOptions = {}): Promise<TurnResult> {
  const registry = opts.registry ?? builtinRegistry();
  const { limits } = input.config;
  const maxSteps = input.maxSteps ?? limits.maxSteps;
  const memory = { ...input.memory };
  const sessionRules: Rule[] = [...(input.sessionRules ?? [])];
  let history = input.history;
  let replaced = false;
  const compressions: CompressionRecord[] = [];
  let added: ChatMessage[] = [{ role: 'user', content: input.userMessage }];
  const toolCalls: ToolCallRecord[] = [];
  const repeat = new RepeatGuard(limits.repeatLimit);
  let usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let modelCalls = 0;
  let failedSteps = 0;
  let lastContent = '';

  const done = (terminated_by: TerminatedBy, answer: string, steps: number, error?: string): TurnResult => ({
    sessionId: input.sessionId,
    turnId: input.turnId,
    turn: input.turn,
    answer,
    terminated_by,
    steps,
    usage,
    messages: replaced ? [...history, ...added] : added,
    ...(replaced ? { replacesHistory: true } : {}),
    ...(compressions.length ? { compressions } : {}),
    memory,
    modelCalls,
    toolCalls,
    sessionRules,
    ...(error ? { error } : {}),
  });

  let step = 0;
  try {
    return await loop();
  } catch (err) {
    if (!ops.isCancellation?.(err)) throw err;
    closeOpenCalls(added, 'The turn was cancelled before this call finished.');
    return done('cancelled', lastContent || 'The turn was cancelled.', step);
  }

  async function loop(): Promise<TurnResult> {
  for (step = 1; step <= maxSteps; step++) {
    ops.onStep?.(step);
    const system: ChatMessage = { role: 'system', content: buildSystemMessage(input.config.systemPrompt, memory, opts.context) };
    // What identifies this step's model traffic (a compression and the call share the index).
    const call = () => ({
      sessionId: input.sessionId,
      turnId: input.turnId,
      step,
      callIndex: input.modelCallBase + modelCalls,
      model: modelRef(input),
      messages: [system, ...history, ...added],
    });
    const compression = input.config.compression;
    const estimate = estimateTokens([system, ...history, ...added], opts.scriptAwareEstimate ? estimateTextTokens : quarterChars);
    if (compression && ops.compressContext && estimate > limitTokens(compression)) {
      try {
        const c = await ops.compressContext({
          ...call(),
          config: compression,
          // Once over the threshold, compress fully (compact every big result, summarise the
          // middle): stopping just under the threshold would trigger again a step later.
          force: true,
        });
        if (c.compressed) {
          history = c.messages.slice(1); // the system message is rebuilt every step
          added = [];
          replaced = true;
          const { before_tokens, after_tokens, summarized_messages, compacted_tool_results } = c;
          compressions.push({ step, before_tokens, after_tokens, summarized_messages, compacted_tool_results });
        }
      } catch (err) {
        // A failed compression is not a failed turn: go on with the full context. A
        // cancellation is not a failure: it ends the turn.
        if (ops.isCancellation?.(err)) throw err;
      }
    }
    let reply: ModelReply;
    try {
      reply = await ops.callModel({ ...call(), tools: registry.names() });
    } catch (err) {
      if (ops.isCancellation?.(err)) throw err;
      // ops.callModel throws only once retries are spent or the error is permanent.
      const why = rootCauseMessage(err);
      return done('failed', `The model call failed: ${why}`, step, why);
    }
    modelCalls++;
    usage = addUsage(usage, reply.usage);
    lastContent = reply.content ?? lastContent;
    const calls = opts.harnessCallIds ? assignCallIds(reply.toolCalls, input.turn, step) : reply.toolCalls;
    added.push({ role: 'assistant', content: reply.content, ...(calls.length ? { tool_calls: calls } : {}) });
    if (calls.length === 0) return done('final_answer', reply.content ?? '', step);

    const verdict = repeat.observe(calls);
    if (verdict === 'stop') {
      for (const call of calls) {
        added.push(toolMessage(call.id, toolError('REPEATED_ACTION', 'Stopped: the same call was repeated after a warning.', { recoverable: false })));
      }
      return done('repeated_action', lastContent || 'Stopped: the same action was repeated.', step);
    }

    const rules = opts.turnRules?.length ? [...sessionRules, ...opts.turnRules] : sessionRules;
    const judged = calls.map((call) => judgeCall(call, registry, opts.policy, rules));
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
    for (const j of judged) {
      const result = j.result ?? (await run(j, step));
      if (j.call.name === 'finish' && result.ok) finishAnswer = (j.args as { answer: string }).answer;
      anyOk ||= result.ok;
      anyFailed ||= !result.ok;
      toolCalls.push(record(j, step, result));
      added.push(toolMessage(j.call.id, result));
    }
    if (finishAnswer !== undefined) return done('finish', finishAnswer, step);
    if (verdict === 'warn') added.push({ role: 'user', content: repeat.warning(calls) });
    failedSteps = anyFailed && !anyOk ? failedSteps + 1 : 0;
    if (failedSteps >= limits.errorLimit) {
      return done('error_limit', lastContent || `Stopped after ${failedSteps} consecutive failed steps.`, step);
    }
  }
  return done('max_steps', lastContent || `Stopped after ${maxSteps} steps without a final answer.`, maxSteps);
  }

  /** Runs an admitted call: workflow-local tools here, the rest through ops.executeTool. */
  async function run(j: JudgedCall, step: number): Promise<ToolResult> {
    const def = j.def!;
    const args = j.args as Record<string, unknown>;
    if (def.runsIn !== 'workflow') {
      const local = def.runsIn === 'local_activity';
      return ops.executeTool({ step, callId: j.call.id, name: def.name, args, timeoutMs: def.timeoutMs, local, ...(j.policy ? { policy: j.policy } : {}) });
    }
    switch (def.name) {
      case 'finish':
        return toolOk({ finished: true });
      case 'remember': {
        const { key, value } = args as { key: string; value: string };
        if (value === '') delete memory[key];
        else memory[key] = value;
        return toolOk({ remembered: key });
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

function record(j: JudgedCall, step: number, result: ToolResult): ToolCallRecord {
  return {
    step,
    callId: j.call.id,
    name: j.call.name,
    args: j.args,
    ok: result.ok,
    ...(result.error_type ? { error_type: result.error_type } : {}),
    ...(j.policy ? { policy: j.policy } : {}),
    ...(j.approval ? { approval: j.approval } : {}),
  };
}

/**
 * A cheap deterministic estimate to decide, inside the workflow, whether the compressContext
 * activity (which counts with the real tokenizer) is worth calling.
 */
function estimateTokens(messages: ChatMessage[], count: (text: string) => number): number {
  let tokens = 0;
  for (const m of messages) {
    tokens += count(m.content ?? '') + 3;
    if (m.role === 'assistant') for (const c of m.tool_calls ?? []) tokens += count(c.name) + count(c.arguments) + 3;
  }
  return tokens;
}

/** The estimate turns recorded before script-aware counting used: 4 characters a token. */
function quarterChars(text: string): number {
  return text.length / 4;
}

/**
 * Gives every call of the last assistant message that has no result yet an error result, so
 * the conversation stays well-formed (providers reject tool calls without results).
 */
function closeOpenCalls(added: ChatMessage[], message: string): void {
  let lastAssistant = added.length - 1;
  while (lastAssistant >= 0 && added[lastAssistant]!.role !== 'assistant') lastAssistant--;
  const last = added[lastAssistant];
  if (!last || last.role !== 'assistant') return;
  const answered = new Set(added.slice(lastAssistant + 1).flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : [])));
  for (const c of last.tool_calls ?? []) {
    if (!answered.has(c.id)) added.push(toolMessage(c.id, toolError('EXECUTION_ERROR', message, { recoverable: false })));
  }
}

function toolMessage(callId: string, result: ToolResult): ChatMessage {
  return { role: 'tool', tool_call_id: callId, content: JSON.stringify(result) };
}

function modelRef(input: TurnInput): ModelCallInput['model'] {
  const m = input.config.model;
  return m.provider === 'openai'
    ? { provider: 'openai', model: m.model, ...(m.baseUrl ? { baseUrl: m.baseUrl } : {}) }
    : { provider: 'scripted', model: m.model };
}
