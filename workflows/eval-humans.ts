/**
 * The people of an eval case: its approval decisions and its answers to ask_user, given in the
 * case, so a trial never waits on a human. Pure and deterministic (part of the turn workflow).
 */
import type { EvalApprovals } from '../deterministic/eval';
import type { ApprovalRecord, PendingApproval } from '../deterministic/session';

/** The case's decision on a call that asks: all approved, all denied, or the first rule that matches. */
export function evalDecision(approvals: EvalApprovals, call: PendingApproval): ApprovalRecord {
  if (approvals === 'approve') return { approved: true, fromRecord: 'eval case' };
  if (approvals === 'deny') return { approved: false, reason: 'the eval case denies calls that ask', fromRecord: 'eval case' };
  const args = JSON.stringify(call.args ?? null);
  const rule = approvals.find((r) => r.tool === call.tool && (r.args_contain === undefined || args.includes(r.args_contain)));
  if (!rule) return { approved: false, reason: 'no decision of the eval case matches this call', fromRecord: 'eval case' };
  return rule.approve ? { approved: true, fromRecord: 'eval case' } : { approved: false, reason: 'denied by the eval case', fromRecord: 'eval case' };
}
