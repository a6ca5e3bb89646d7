/**
 * What the step loop accumulates over a turn: started from the turn's input (or from where the
 * previous run of a long turn stopped), and read back as the turn's result or as the point the
 * next run resumes from. Pure and deterministic.
 */
import type { ModelReply } from '../../deterministic/activity-types';
import { builtinRegistry } from '../../deterministic/builtin-tools';
import { EMPTY_CONVERSATION } from '../../deterministic/conversation';
import type { Rule } from '../../deterministic/policy';
import { type CompressionRecord, type TerminatedBy, type TurnInput, type TurnResult, type TurnResume } from '../../deterministic/session';
import { addUsage, NO_USAGE } from '../../deterministic/usage';
import { type ToolCallRecord } from '../../deterministic/call-records';
import type { McpToolSet } from '../../deterministic/mcp';
import type { ToolRegistry } from '../../deterministic/tools';
import type { ChatMessage, ToolCall, Usage } from '../../deterministic/types';
import { InlineConversation, StoredConversation, type TurnConversation } from './conversation';
import { RepeatGuard } from './repeat-guard';
import { resultSpend, resumeSpend, type Spent } from './budget';
import type { TurnOptions } from './loop';
import { handedOn } from './mcp';

/** Everything the loop holds between steps (what a continue-as-new carries, plus the run's registry and open calls). */
export interface LoopState {
  registry: ToolRegistry;
  /** MCP tools a server re-listed during this turn (kept by the session for later turns). */
  mcpTools: McpToolSet | undefined;
  mcpChanged: boolean;
  memory: Record<string, string>;
  sessionRules: Rule[];
  compressions: CompressionRecord[];
  toolCalls: ToolCallRecord[];
  storedToolCalls: string[];
  repeat: RepeatGuard;
  usage: Usage;
  modelCalls: number;
  /** Attempts beyond the first of the turn's model calls (a rate-limited endpoint shows here). */
  retriedAttempts: number;
  failedSteps: number;
  lastContent: string;
  conversation: TurnConversation;
  /** Calls of the current step without a result yet (a cancellation answers them with an error). */
  open: ToolCall[];
  /** With structured output: the final answers so far that did not match it. */
  invalidOutputs: number;
}

/** The loop's state at the start of a run: fresh, or as the previous run of the turn left it. */
export function startLoop(input: TurnInput, opts: TurnOptions): LoopState {
  const r = input.resume;
  return {
    registry: opts.registry ?? builtinRegistry(),
    // opts.registry and opts.mcp.tools already hold the list a previous run of the turn re-listed.
    mcpTools: opts.mcp?.tools,
    mcpChanged: r?.mcpTools !== undefined,
    memory: { ...(r?.memory ?? input.memory) },
    sessionRules: [...(r?.sessionRules ?? input.sessionRules ?? [])],
    compressions: [...(r?.compressions ?? [])],
    toolCalls: [...(r?.toolCalls ?? [])],
    storedToolCalls: [...(r?.storedToolCalls ?? [])],
    repeat: new RepeatGuard(input.config.limits.repeatLimit, r?.repeat, true),
    usage: r?.usage ?? NO_USAGE,
    modelCalls: r?.modelCalls ?? 0,
    retriedAttempts: r?.retriedAttempts ?? 0,
    failedSteps: r?.failedSteps ?? 0,
    lastContent: r?.lastContent ?? '',
    conversation: startConversation(input, opts),
    open: [],
    invalidOutputs: r?.invalidOutputs ?? 0,
  };
}

/** Counts a model reply that came back: the call, its extra attempts, its usage and its text. */
export function countReply(s: LoopState, reply: ModelReply): void {
  s.modelCalls++;
  s.retriedAttempts += Math.max(0, (reply.attempt ?? 1) - 1);
  s.usage = addUsage(s.usage, reply.usage);
  s.lastContent = reply.content ?? s.lastContent;
}

/** How a turn ended: why, the answer it gives, and the steps it counts. */
export interface TurnEnd {
  terminated_by: TerminatedBy;
  answer: string;
  steps: number;
  error?: string;
  /** With structured output: the validated answer, or why none was (error_type OUTPUT_INVALID). */
  output?: unknown;
  errorType?: string;
}

/** The turn's result from the loop's state, as the session records it. */
export function turnResult(input: TurnInput, opts: TurnOptions, s: LoopState, end: TurnEnd, spent: Spent | undefined): TurnResult {
  const { terminated_by, answer, steps, error, output, errorType } = end;
  return {
    sessionId: input.sessionId,
    turnId: input.turnId,
    turn: input.turn,
    answer,
    terminated_by,
    steps,
    usage: s.usage,
    ...s.conversation.outcome(),
    ...(s.compressions.length ? { compressions: s.compressions } : {}),
    memory: s.memory,
    modelCalls: s.modelCalls,
    toolCalls: s.toolCalls,
    ...(s.storedToolCalls.length ? { storedToolCalls: s.storedToolCalls } : {}),
    sessionRules: s.sessionRules,
    ...(s.mcpChanged && s.mcpTools ? { mcpTools: handedOn(s.mcpTools) } : {}),
    ...(opts.custom?.listed ? { customTools: opts.custom.tools } : {}),
    ...(s.retriedAttempts ? { retriedAttempts: s.retriedAttempts } : {}),
    ...(output !== undefined ? { output } : {}),
    ...(error ? { error } : {}),
    ...(errorType ? { error_type: errorType } : {}),
    ...resultSpend(spent),
  };
}

/** Where to go on from in a new run: everything the loop holds, between steps. */
export function resumeAt(s: LoopState, opts: TurnOptions, next: number, c: StoredConversation, spent: Spent | undefined): TurnResume {
  return {
    step: next,
    usage: s.usage,
    modelCalls: s.modelCalls,
    ...(s.retriedAttempts ? { retriedAttempts: s.retriedAttempts } : {}),
    failedSteps: s.failedSteps,
    lastContent: s.lastContent,
    repeat: s.repeat.state(),
    memory: s.memory,
    sessionRules: s.sessionRules,
    compressions: s.compressions,
    toolCalls: s.toolCalls,
    storedToolCalls: s.storedToolCalls,
    conversation: c.snapshot(),
    ...(s.mcpChanged && s.mcpTools ? { mcpTools: handedOn(s.mcpTools) } : {}),
    ...(s.invalidOutputs ? { invalidOutputs: s.invalidOutputs } : {}),
    ...resumeSpend(spent),
    prepared: {
      ...(opts.context?.skillsIndex ? { skillsIndex: opts.context.skillsIndex } : {}),
      ...(opts.context?.memories?.length ? { memories: opts.context.memories } : {}),
      ...(opts.turnRules?.length ? { skillRules: [...opts.turnRules] } : {}),
      ...(opts.custom?.listed ? { customTools: opts.custom.tools } : {}),
    },
  };
}

/**
 * The turn's conversation: continued from where a previous run stopped; by reference to the
 * message store (sessions from before it hand over their messages as pending, stored by the
 * first model call); or inline, for the history benchmark's baseline (`inlineHistory`).
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
  const c = new InlineConversation(input.history);
  c.add(user);
  return c;
}
