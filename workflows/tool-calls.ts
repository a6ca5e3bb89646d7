/**
 * Judging a step's tool calls before anything runs: parse the argument JSON, find the tool,
 * validate with zod, then ask the policy. Calls the policy sends to a human are gathered so
 * all of a step's approvals can be given together. Pure and deterministic.
 */
import { callDigest } from '../common/digest';
import { isBlobArg, type BlobArg } from '../common/conversation';
export { assignCallIds } from '../common/call-ids';
import { toolError } from '../common/errors';
import { alwaysRuleFor, decide, type Policy, type Rule } from '../common/policy';
import type { ApprovalRecord, PendingApproval, PolicyRecord } from '../common/session';
import { describeIssues, type ToolDefinition, type ToolRegistry } from '../common/tools';
import type { ToolCall, ToolResult } from '../common/types';

/** A call after judgement: either already answered (`result`) or ready to run. */
export interface JudgedCall {
  call: ToolCall;
  def?: ToolDefinition;
  args: unknown;
  policy?: PolicyRecord;
  approval?: ApprovalRecord;
  result?: ToolResult;
}

/** Parses, validates and (when a policy is given) decides one call. */
export function judgeCall(call: ToolCall, registry: ToolRegistry, policy: Policy | undefined, sessionRules: readonly Rule[]): JudgedCall {
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
      result: toolError('UNKNOWN_TOOL', `There is no tool named "${call.name}".`, { suggestion: `Use one of: ${registry.names().join(', ')}.` }),
    };
  }
  let raw: unknown;
  try {
    raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (err) {
    return {
      call,
      def,
      args: call.arguments,
      result: toolError('INVALID_ARGUMENTS', `Arguments of ${call.name} are not valid JSON: ${(err as Error).message}`, {
        suggestion: 'Send the arguments as one JSON object matching the tool schema.',
      }),
    };
  }
  // Payloads the model activity stored are validated by a stand-in (their preview) and run as
  // the reference (the tool reads the value back); the policy sees the preview.
  const stored = storedArgs(call, raw);
  const parsed = def.parameters.safeParse(stored ? { ...(raw as object), ...stored.previews } : raw);
  if (!parsed.success) {
    return {
      call,
      def,
      args: raw,
      result: toolError('INVALID_ARGUMENTS', `Invalid arguments for ${call.name}: ${describeIssues(parsed.error)}`, {
        suggestion: 'Fix the named fields and call the tool again.',
      }),
    };
  }
  const view = parsed.data as Record<string, unknown>;
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
