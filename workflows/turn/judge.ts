/**
 * Judging a step's tool calls before anything runs: parse the argument JSON, find the tool,
 * validate with zod, then ask the policy. Calls the policy sends to a human are gathered so
 * all of a step's approvals can be given together. Pure and deterministic.
 *
 * The arguments are model-written text, read in workflow code, where a throw, a stack overflow or
 * a long computation fails the workflow task (Temporal retries it forever, on every worker). So
 * every outcome of reading and checking them is a value: the arguments, or a structured tool
 * error the model reads.
 */
import { z } from 'zod';
import { callDigest } from '../../deterministic/digest';
import { isBlobArg, type BlobArg } from '../../deterministic/conversation';
import { toolError } from '../../deterministic/errors';
import { clipText, MAX_ARGS_DEPTH, MAX_STEP_VALUES, scanJson } from '../../deterministic/json-bounds';
import { MAX_CHECK_WORK } from '../../deterministic/mcp-schema';
import { alwaysRuleFor, decide, type Policy, type Rule } from '../../deterministic/policy';
import type { ApprovalRecord, PolicyRecord } from '../../deterministic/call-records';
import type { PendingApproval } from '../../deterministic/session-state';
import { describeIssues, type ToolDefinition, type ToolRegistry } from '../../deterministic/tools';
import type { ToolCall, ToolResult } from '../../deterministic/types';

/** A call after judgement: either already answered (`result`) or ready to run. */
export interface JudgedCall {
  call: ToolCall;
  def?: ToolDefinition;
  args: unknown;
  policy?: PolicyRecord;
  approval?: ApprovalRecord;
  result?: ToolResult;
  /** A rerun answered the call with the recorded result of this turn (recorded-effects.ts): it was not made. */
  replayed?: string;
}

/** How calls are judged: `bounded` (every turn judges so) caps what model text may cost (see readArguments). */
export interface JudgeOptions {
  bounded?: boolean;
  /** What the step's calls judged so far left of its argument values. */
  budget?: StepBudget;
}

/** Parses, validates and (when a policy is given) decides one call. */
export function judgeCall(call: ToolCall, registry: ToolRegistry, policy: Policy | undefined, sessionRules: readonly Rule[], opts: JudgeOptions = {}): JudgedCall {
  const bounded = opts.bounded === true;
  // A text-mode reply the model activity could not read as a call, after its corrections: the
  // model reads why (only replies of text-mode turns carry the mark, so recorded turns judge as before).
  if (typeof call.invalid === 'string') {
    return {
      call,
      args: call.arguments,
      result: toolError('INVALID_TOOL_CALL', `Your reply could not be read as a tool call: ${shownName(call.invalid, true)}.`, {
        suggestion: 'Reply with only {"tool_calls": [{"name": "<tool>", "arguments": {...}}]} to call a tool, or {"answer": "..."} to answer.',
      }),
    };
  }
  const def = registry.get(call.name);
  const down = def ? undefined : registry.unavailableReason(call.name);
  if (down) {
    return {
      call,
      args: call.arguments,
      result: toolError('MCP_SERVER_UNAVAILABLE', `The MCP server ${down.server} is unavailable: ${down.why}`, {
        suggestion: 'Its tools cannot be used in this session for now; continue with the other tools.',
      }),
    };
  }
  if (!def) {
    return {
      call,
      args: call.arguments,
      result: toolError('UNKNOWN_TOOL', `There is no tool named "${shownName(call.name, bounded)}".`, { suggestion: `Use one of: ${registry.names().join(', ')}.` }),
    };
  }
  const read = readArguments(call, bounded, opts.budget);
  if (!read.ok) return { call, def, args: call.arguments, result: read.result };
  const raw = read.value;
  // Payloads the model activity stored are validated by a stand-in (their preview) and run as
  // the reference (the tool reads the value back); the policy sees the preview.
  const stored = storedArgs(call, raw);
  const checked = checkArguments(def, call.name, stored ? { ...(raw as object), ...stored.previews } : raw, bounded, call.arguments.length);
  if (!checked.ok) return { call, def, args: raw, result: checked.result };
  const view = checked.value;
  const args = stored ? { ...view, ...stored.refs } : view;
  if (!policy) return { call, def, args };
  const d = decide(policy, { tool: def.name, risk: def.risk, args: view }, sessionRules);
  const record: PolicyRecord = { decision: d.decision, reason: d.reason, ...(d.rule ? { rule: d.rule } : {}) };
  if (d.decision === 'deny') {
    return {
      call,
      def,
      args,
      policy: record,
      result: toolError('PERMISSION_DENIED', `Not allowed: ${d.reason}`, {
        suggestion: 'Choose another way that stays within the policy, or explain to the user what you need.',
      }),
    };
  }
  return { call, def, args, policy: record };
}

/** The stored payload arguments of a call: their references, and previews to validate in their place. */
function storedArgs(call: ToolCall, raw: unknown): { refs: Record<string, BlobArg>; previews: Record<string, string> } | undefined {
  if (!call.storedArgs?.length || !raw || typeof raw !== 'object') return undefined;
  const refs: Record<string, BlobArg> = {};
  const previews: Record<string, string> = {};
  for (const name of call.storedArgs) {
    const v = (raw as Record<string, unknown>)[name];
    if (isBlobArg(v)) {
      refs[name] = v;
      previews[name] = v.preview;
    }
  }
  return Object.keys(refs).length ? { refs, previews } : undefined;
}

/** The approval request shown to a human for a call the policy sent to ask. */
export function approvalRequest(j: JudgedCall): PendingApproval {
  return {
    callId: j.call.id,
    tool: j.call.name,
    args: j.args,
    digest: callDigest(j.call.name, j.args),
    risk: j.def!.risk,
    reason: j.policy?.reason ?? '',
    ...(j.policy?.rule ? { rule: j.policy.rule } : {}),
  };
}

/**
 * Applies a human's decision to an asked call; returns the session rule an `--always` adds
 * (shaped by the policy's version, so older sessions replay with the rules they made).
 */
export function applyApproval(j: JudgedCall, outcome: ApprovalRecord, policy?: Policy): Rule | undefined {
  j.approval = outcome;
  if (outcome.timedOut) {
    j.result = toolError('APPROVAL_TIMEOUT', 'Nobody approved this call in time; it did not run.', {
      suggestion: 'Continue without it, or finish and say what needs approval.',
    });
    return undefined;
  }
  if (!outcome.approved) {
    j.result = toolError('APPROVAL_DENIED', `Denied${outcome.reason ? `: ${outcome.reason}` : ''}.`, {
      suggestion: 'Do not retry the same call; take another approach or ask the user.',
    });
    return undefined;
  }
  return outcome.always ? alwaysRuleFor({ tool: j.def!.name, risk: j.def!.risk, args: j.args as Record<string, unknown> }, policy, outcome.pattern) : undefined;
}

/**
 * judgeCall that never throws: whatever still goes wrong judging model-written input is an
 * INVALID_TOOL_CALL the model reads, not a failed workflow task retried forever on every worker.
 */
export function judgeSafely(call: ToolCall, registry: ToolRegistry, policy: Policy | undefined, sessionRules: readonly Rule[], opts: JudgeOptions = {}): JudgedCall {
  try {
    return judgeCall(call, registry, policy, sessionRules, opts);
  } catch (err) {
    const why = shownName((err as Error)?.message ?? err, true);
    return {
      call,
      args: call.arguments,
      result: toolError('INVALID_TOOL_CALL', `The call of ${shownName(call.name, true)} could not be judged: ${why}`, {
        suggestion: 'Try another way (other arguments or another tool).',
      }),
    };
  }
}

/** A step's calls judged in order, none throwing; bounded, their arguments share MAX_STEP_VALUES. */
export function judgeStep(calls: readonly ToolCall[], registry: ToolRegistry, policy: Policy | undefined, sessionRules: readonly Rule[], bounded = false): JudgedCall[] {
  const budget: StepBudget = { values: MAX_STEP_VALUES };
  return calls.map((c) => judgeSafely(c, registry, policy, sessionRules, { bounded, budget }));
}

/** Validation messages longer than this are cut (a server's enum of thousands of values would be echoed whole). */
export const MAX_ISSUES_CHARS = 1000;
/** A tool name is echoed back at most this long (no tool's name is longer than 64). */
export const MAX_NAME_ECHO = 100;

/** What is left of a step's MAX_STEP_VALUES for its calls still to judge (they take from it in order). */
export interface StepBudget {
  values: number;
}

/** What reading or checking gave: the value, or the error the model gets instead. */
export type Checked<T> = { ok: true; value: T } | { ok: false; result: ToolResult };

const fail = (message: string, suggestion: string): Checked<never> => ({ ok: false, result: toolError('INVALID_ARGUMENTS', message, { suggestion }) });

/**
 * The call's arguments parsed. `bounded` (every turn judges so) refuses text
 * nesting deeper than MAX_ARGS_DEPTH before parsing, so nothing after ever recurses that deep,
 * and text holding more values than the step's `budget` has left, so no pass over them is slow.
 */
export function readArguments(call: ToolCall, bounded: boolean, budget?: StepBudget): Checked<unknown> {
  const text: unknown = call.arguments;
  // Only a provider that breaks the protocol sends anything but text (the model activity turns it into text).
  if (typeof text !== 'string') return fail(`Arguments of ${call.name} are not JSON text.`, 'Send the arguments as one JSON object matching the tool schema.');
  const shape = bounded ? scanJson(text, MAX_ARGS_DEPTH) : undefined;
  if (shape?.tooDeep) {
    return fail(`Arguments of ${call.name} nest arrays and objects deeper than ${MAX_ARGS_DEPTH} levels.`, 'Send flatter arguments matching the tool schema.');
  }
  if (shape && budget) {
    if (shape.values > budget.values) {
      return fail(
        `Arguments of ${call.name} hold about ${shape.values} values; the calls of one reply may hold ${MAX_STEP_VALUES} together (${budget.values} were left).`,
        'Send less data per reply: split it over several steps, or write large content to a file with write_file.',
      );
    }
    budget.values -= shape.values;
  }
  try {
    return { ok: true, value: text.trim() === '' ? {} : JSON.parse(text) };
  } catch (err) {
    return fail(`Arguments of ${call.name} are not valid JSON: ${(err as Error).message}`, 'Send the arguments as one JSON object matching the tool schema.');
  }
}

// Built when first needed: a schema costs every workflow that builds it (every turn evaluates
// this module), and only a bounded check of an expensive MCP schema uses this one.
let anObject: z.ZodObject | undefined;

/**
 * The arguments (`chars` long as text) validated against the tool's schema; a schema that throws
 * is an error too. Bounded, an MCP schema whose validation would cost more than MAX_CHECK_WORK
 * checks only that they are an object (the server validates them again).
 */
export function checkArguments(def: ToolDefinition, name: string, value: unknown, bounded: boolean, chars: number): Checked<Record<string, unknown>> {
  const schema = bounded && def.checkCost !== undefined && def.checkCost * chars > MAX_CHECK_WORK ? (anObject ??= z.looseObject({})) : def.parameters;
  let parsed: ReturnType<ToolDefinition['parameters']['safeParse']>;
  try {
    parsed = schema.safeParse(value);
  } catch (err) {
    return fail(
      `Arguments of ${name} could not be checked against its schema: ${clipText(String((err as Error)?.message ?? err), MAX_NAME_ECHO)}`,
      'The tool schema cannot be applied to these arguments; use another tool or other arguments.',
    );
  }
  if (parsed.success) return { ok: true, value: parsed.data as Record<string, unknown> };
  const issues = describeIssues(parsed.error);
  return fail(`Invalid arguments for ${name}: ${bounded ? clipText(issues, MAX_ISSUES_CHARS) : issues}`, 'Fix the named fields and call the tool again.');
}

/** The name a message shows for a call that names no tool: cut when long (bounded), as text whatever the provider sent. */
export function shownName(name: unknown, bounded: boolean): string {
  return bounded ? clipText(String(name), MAX_NAME_ECHO) : String(name);
}
