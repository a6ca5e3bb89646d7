/**
 * What a step of the loop does between its awaits (loop.ts has the awaits). Pure and
 * deterministic but for ask_user, which waits on ops.askUser:
 * - what it sends to the model and reads of the reply: the identity of the step's model traffic,
 *   the model call's input, the reply's tool calls, and when the context is compressed first;
 * - what it decides: where a run may stop to continue as new, the rules a step is judged with and
 *   the calls it asks about, what a step's results add up to (finish, failure, a server's changed
 *   list), the notes the model reads, when call records go to the store, and the results of calls
 *   a stop leaves unrun;
 * - how it runs an admitted call: the request ops.executeTool gets for a tool that runs outside
 *   the workflow, and the tools the workflow itself implements (finish, remember, ask_user, wait).
 *
 * Working memory (`remember`) is bounded: it is in every step's system message, the turn's
 * result and the session's state, and a model remembering 64 facts of 2,000 characters a step
 * made the model call's input pass Temporal's 2 MB payload limit, so that every attempt of that
 * workflow task failed (PayloadsTooLarge) forever.
 */
import type { CompressContextResult } from '../../deterministic/context/types';
import type { ModelCallInput, ModelReply, ToolOutcome } from '../../deterministic/activity-types';
import { assignCallIds } from '../../deterministic/call-ids';
import { limitTokens } from '../../deterministic/context/plan';
import { CANCELLED_CALL_MESSAGE, toolError, toolOk } from '../../deterministic/errors';
import type { Policy, Rule } from '../../deterministic/policy';
import type { CompressionRecord, TurnInput } from '../../deterministic/session';
import type { ApprovalRecord, ToolCallRecord } from '../../deterministic/call-records';
import type { ToolDefinition } from '../../deterministic/tools';
import type { ChatMessage, ToolCall, ToolResult } from '../../deterministic/types';
import { StoredConversation, type ContextParts, type TurnConversation } from './conversation';
import { applyApproval, type JudgedCall } from './judge';
import type { ToolExecution, TurnOps, TurnOptions } from './loop';
// How far working memory may grow (MAX_MEMORY_CHARS) is replay-relevant: replay-constants.ts.
import { MAX_MEMORY_CHARS } from './replay-constants';
import type { RepeatGuard, RepeatVerdict } from './repeat-guard';
import type { LoopState } from './state';

/** What identifies a step's model traffic (a compression and the call share the index), with the context it carries. */
export type StepTraffic = Pick<ModelCallInput, 'sessionId' | 'turnId' | 'step' | 'callIndex' | 'model'> & ContextParts;

/**
 * The step's traffic as it stands: read again for each call, since a compression changes the
 * context and the stored conversation notes which system text it offered.
 */
export function stepTraffic(input: TurnInput, s: LoopState, step: number, system: string, notes?: string): StepTraffic {
  return {
    sessionId: input.sessionId,
    turnId: input.turnId,
    step,
    callIndex: input.modelCallBase + s.modelCalls,
    model: modelRef(input),
    ...s.conversation.context(system, notes),
  };
}

/** Whether the context passed the compression threshold (then it is compressed fully before the call). */
export function overThreshold(conversation: TurnConversation, system: string, compression: NonNullable<TurnInput['config']['compression']>): boolean {
  return conversation.estimate(system) > limitTokens(compression);
}

/** What the turn result records of a compression that changed the conversation. */
export function compressionRecord(step: number, c: CompressContextResult): CompressionRecord {
  const { before_tokens, after_tokens, summarized_messages, compacted_tool_results } = c;
  return { step, before_tokens, after_tokens, summarized_messages, compacted_tool_results };
}

/** The model call's input: the step's traffic, the tools offered, and (with the store) the prefix of the step's call ids. */
export function modelCallInput(traffic: StepTraffic, input: TurnInput, opts: TurnOptions, s: LoopState, step: number): ModelCallInput {
  return {
    ...traffic,
    tools: s.registry.names(),
    ...(s.mcpTools?.ref ? { mcpTools: s.mcpTools.ref } : {}),
    ...(opts.custom?.tools.ref ? { customTools: opts.custom.tools.ref } : {}),
    ...(s.conversation instanceof StoredConversation ? { callIdPrefix: `t${input.turn}-s${step}` } : {}),
  };
}

/**
 * The reply's tool calls with the ids the turn uses: the harness's own (unique per turn, step and
 * call; a provider's may be missing or repeat across steps). With the store the activity gave
 * them already: the stored message has them.
 */
export function stepCalls(reply: ModelReply, turn: number, step: number): ToolCall[] {
  return reply.conversation ? reply.toolCalls : assignCallIds(reply.toolCalls, turn, step);
}

/** The assistant message a reply makes, with the calls as the turn names them. */
export function assistantMessage(reply: ModelReply, calls: ToolCall[]): ChatMessage {
  return { role: 'assistant', content: reply.content, ...(calls.length ? { tool_calls: calls } : {}) };
}

/** The model as the model and compression calls name it: provider, name and (OpenAI) endpoint only. */
function modelRef(input: TurnInput): ModelCallInput['model'] {
  const m = input.config.model;
  return m.provider === 'openai'
    ? { provider: 'openai', model: m.model, ...(m.baseUrl ? { baseUrl: m.baseUrl } : {}) }
    : { provider: 'scripted', model: m.model, ...(m.scriptKey ? { scriptKey: m.scriptKey } : {}), ...(input.prepared ? { script: m.script } : {}) };
}

/** Call records kept in the turn's own state; older ones go to the store in chunks of this many. */
export const RECORDS_CHUNK = 32;

/**
 * The conversation a run may stop at this step with, to continue as new: only between steps
 * (never before the run's first) and only by reference to the store (an inline one is too big to carry).
 */
export function continuationPoint(conversation: TurnConversation, step: number, first: number): StoredConversation | undefined {
  return step > first && conversation instanceof StoredConversation ? conversation : undefined;
}

/** The rules a step is judged with: the session's, then this turn's (skills), then the MCP servers'. */
export function stepRules(s: LoopState, opts: TurnOptions): Rule[] {
  const mcpDecisions = s.mcpTools && opts.mcp ? opts.mcp.rules(s.mcpTools) : [];
  return opts.turnRules?.length || mcpDecisions.length ? [...s.sessionRules, ...(opts.turnRules ?? []), ...mcpDecisions] : s.sessionRules;
}

/** The admitted calls the policy sends to a human. */
export function askedCalls(judged: readonly JudgedCall[]): JudgedCall[] {
  return judged.filter((j) => !j.result && j.policy?.decision === 'ask');
}

/** Applies the humans' decisions to the asked calls (a missing one timed out); an `--always` adds its rule to the session's. */
export function applyApprovals(asked: readonly JudgedCall[], outcomes: Map<string, ApprovalRecord>, policy: Policy | undefined, sessionRules: Rule[]): void {
  for (const j of asked) {
    const rule = applyApproval(j, outcomes.get(j.call.id) ?? { approved: false, timedOut: true }, policy);
    if (rule) sessionRules.push(rule);
  }
}

/** What a step's results add up to, call by call in order. */
export class StepTally {
  /** The answer of a `finish` that succeeded (the turn ends with it after the step): text, or with structured output the object. */
  finishAnswer: unknown;
  anyOk = false;
  anyFailed = false;
  /** MCP servers that said their tool list changed: the next step offers what they list now. */
  readonly relist = new Set<string>();

  /** `answerOf`: a finish call's answer from its arguments (TurnOptions.finishAnswer); absent: its `answer`. */
  constructor(private readonly answerOf?: (args: Record<string, unknown>) => unknown) {}

  /** Counts one call's result. */
  add(j: JudgedCall, result: ToolResult): void {
    if ((result as ToolOutcome).mcpListChanged && j.def?.source.startsWith('mcp:')) this.relist.add(j.def.source.slice(4));
    if (j.call.name === 'finish' && result.ok) {
      const args = j.args as Record<string, unknown>;
      this.finishAnswer = this.answerOf ? this.answerOf(args) : (args as { answer: string }).answer;
    }
    this.anyOk ||= result.ok;
    this.anyFailed ||= !result.ok;
  }
}

/** Consecutive failed steps after this one: a step where every call failed adds one, any success starts again. */
export function failedStepsAfter(before: number, tally: StepTally): number {
  return tally.anyFailed && !tally.anyOk ? before + 1 : 0;
}

/**
 * What the model reads after a step's results: that the model activity kept only a bounded
 * number of the reply's calls, and the repeat guard's warning.
 */
export function stepNotes(calls: ToolCall[], droppedCalls: number | undefined, verdict: RepeatVerdict, repeat: RepeatGuard): ChatMessage[] {
  const notes: ChatMessage[] = [];
  if (droppedCalls) notes.push({ role: 'user', content: droppedCallsNote(calls.length, droppedCalls) });
  if (verdict === 'warn') notes.push({ role: 'user', content: repeat.warning(calls) });
  return notes;
}

/** Whether the oldest chunk of call records goes to the store now, so a long turn's state and result stay small. */
export function recordsChunkDue(s: LoopState): boolean {
  return s.conversation instanceof StoredConversation && s.toolCalls.length >= 2 * RECORDS_CHUNK;
}

/** The result each call of a step gets when the repeat guard stops the turn: none of them ran. */
export function repeatedActionError(): ToolResult {
  return toolError('REPEATED_ACTION', 'Stopped: the same call was repeated after a warning.', { recoverable: false });
}

/** The result of a call still open when the turn was cancelled. */
export function cancelledCallError(): ToolResult {
  return toolError('EXECUTION_ERROR', CANCELLED_CALL_MESSAGE, { recoverable: false });
}

// A record keeps arguments up to this size whole (the store and the model call's history have them all).
const RECORD_ARGS_MAX = 1024;

/** The record the turn keeps of one call of a step. */
export function callRecord(j: JudgedCall, step: number, result: ToolResult): ToolCallRecord {
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
    ...(j.replayed ? { replayed: j.replayed } : {}),
  };
}

/** The executeTool request of a call: its tool's timeout and where it runs, and for MCP and custom tools whether it may run twice. */
export function toolExecution(j: JudgedCall, def: ToolDefinition, step: number): ToolExecution {
  const args = j.args as Record<string, unknown>;
  const local = def.runsIn === 'local_activity';
  const mcp = def.mcpTool !== undefined && def.source.startsWith('mcp:') ? { mcp: { server: def.source.slice(4), tool: def.mcpTool, idempotent: def.annotations?.idempotentHint === true || def.annotations?.readOnlyHint === true } } : {};
  const custom = def.source === 'custom' ? { custom: { idempotent: def.idempotent === true } } : {};
  return { step, callId: j.call.id, name: def.name, args, timeoutMs: def.timeoutMs, local, readOnly: def.risk === 'read_only', ...(j.policy ? { policy: j.policy } : {}), ...mcp, ...custom };
}

/**
 * Runs a tool the workflow implements; any other name has no implementation here and is a result
 * the model reads. Not async: finish and remember answer without the extra microtask turns an
 * async call adds, as when the loop ran them inline; only ask_user and wait (wait.ts) wait.
 */
export function workflowTool(j: JudgedCall, def: ToolDefinition, memory: Record<string, string>, ops: Pick<TurnOps, 'askUser' | 'wait'>): ToolOutcome | Promise<ToolOutcome> {
  const args = j.args as Record<string, unknown>;
  switch (def.name) {
    case 'finish':
      return toolOk({ finished: true });
    case 'remember': {
      const { key, value } = args as { key: string; value: string };
      return rememberFact(memory, key, value);
    }
    case 'ask_user':
      return askUser(j, (args as { question: string }).question, ops);
    case 'wait':
      if (ops.wait) return ops.wait(j.call.id, args);
      break;
  }
  return toolError('UNKNOWN_TOOL', `Tool "${def.name}" has no workflow implementation.`, { recoverable: false });
}

/** ask_user: the human's answer, or a timeout the model reads. */
async function askUser(j: JudgedCall, question: string, ops: Pick<TurnOps, 'askUser'>): Promise<ToolOutcome> {
  const answer = await ops.askUser(j.call.id, question);
  if (answer !== undefined) return toolOk({ answer });
  return toolError('USER_TIMEOUT', 'The user did not answer in time.', {
    suggestion: 'Continue with what you know, or finish and say what is missing.',
  });
}

/** Stores (or, with an empty value, forgets) a fact; refuses to grow memory past MAX_MEMORY_CHARS. */
function rememberFact(memory: Record<string, string>, key: string, value: string): ToolResult {
  if (value === '') {
    delete memory[key];
    return toolOk({ remembered: key });
  }
  const size = Object.entries(memory).reduce((n, [k, v]) => n + k.length + v.length, 0);
  const old = Object.prototype.hasOwnProperty.call(memory, key) ? key.length + memory[key]!.length : 0;
  const next = size - old + key.length + value.length;
  if (next > MAX_MEMORY_CHARS && next > size) {
    return toolError('MEMORY_FULL', `Working memory is full: it would hold ${next} characters, more than ${MAX_MEMORY_CHARS}.`, {
      suggestion: 'Forget facts no longer needed (remember the key with an empty value), shorten them, or save them with remember_longterm.',
    });
  }
  // Defined, not assigned: assigning to a key named `__proto__` would silently store nothing.
  Object.defineProperty(memory, key, { value, enumerable: true, writable: true, configurable: true });
  return toolOk({ remembered: key });
}

/** What the model is told when the model activity kept only the first `kept` calls of its reply. */
export function droppedCallsNote(kept: number, dropped: number): string {
  return `[harness] Your reply had ${kept + dropped} tool calls; only the first ${kept} were taken and the other ${dropped} were ignored. Make at most ${kept} calls in one reply.`;
}
