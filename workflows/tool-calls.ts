/**
 * Judging a step's tool calls before anything runs: parse the argument JSON, find the tool,
 * validate with zod, then ask the policy. Calls the policy sends to a human are gathered so
 * all of a step's approvals can be given together. Pure and deterministic.
 */
import { callDigest } from '../common/digest';
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

/**
 * The harness's own call ids: `t<turn>-s<step>-c<index>`, unique within a session, so a
 * decision or answer for one call can never be taken for another (providers may send no id, or
 * the same id every step). The provider's id is kept for the provider when it is usable: present
 * and not repeated within the reply.
 */
export function assignCallIds(calls: readonly ToolCall[], turn: number, step: number): ToolCall[] {
  const seen = new Map<string, number>();
  for (const c of calls) if (c.id) seen.set(c.id, (seen.get(c.id) ?? 0) + 1);
  return calls.map((c, i) => ({
    id: `t${turn}-s${step}-c${i}`,
    name: c.name,
    arguments: c.arguments,
    ...(c.id && seen.get(c.id) === 1 ? { providerId: c.id } : {}),
  }));
}

/** Parses, validates and (when a policy is given) decides one call. */
export function judgeCall(call: ToolCall, registry: ToolRegistry, policy: Policy | undefined, sessionRules: readonly Rule[]): JudgedCall {
  const def = registry.get(call.name);
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
  const parsed = def.parameters.safeParse(raw);
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
  const args = parsed.data as Record<string, unknown>;
  if (!policy) return { call, def, args };
  const d = decide(policy, { tool: def.name, risk: def.risk, args }, sessionRules);
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
  return outcome.always ? alwaysRuleFor({ tool: j.def!.name, risk: j.def!.risk, args: j.args as Record<string, unknown> }, policy) : undefined;
}
