/**
 * What the step loop decides between its awaits: where a run may stop to continue as new, the
 * rules a step is judged with and the calls it asks about, what a step's results add up to
 * (finish, failure, a server's changed list), the notes the model reads, when call records go to
 * the store, and the results of calls a stop leaves unrun. Pure and deterministic.
 */
import type { ToolOutcome } from '../../deterministic/activity-types';
import { CANCELLED_CALL_MESSAGE, toolError } from '../../deterministic/errors';
import type { Policy, Rule } from '../../deterministic/policy';
import type { ApprovalRecord, ToolCallRecord } from '../../deterministic/session';
import type { ChatMessage, ToolCall, ToolResult } from '../../deterministic/types';
import { droppedCallsNote } from '../call-args';
import { StoredConversation, type TurnConversation } from './conversation';
import type { RepeatGuard, RepeatVerdict } from './repeat-guard';
import { applyApproval, type JudgedCall } from './judge';
import type { TurnOptions } from '../turn-ops';
import type { LoopState } from './state';

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
  /** The answer of a `finish` that succeeded (the turn ends with it after the step). */
  finishAnswer: string | undefined;
  anyOk = false;
  anyFailed = false;
  /** MCP servers that said their tool list changed: the next step offers what they list now. */
  readonly relist = new Set<string>();

  /** Counts one call's result. */
  add(j: JudgedCall, result: ToolResult): void {
    if ((result as ToolOutcome).mcpListChanged && j.def?.source.startsWith('mcp:')) this.relist.add(j.def.source.slice(4));
    if (j.call.name === 'finish' && result.ok) this.finishAnswer = (j.args as { answer: string }).answer;
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
