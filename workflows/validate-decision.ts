/**
 * The approvals update's validator: a decision that does not match what is pending is refused
 * before anything is written to history. Pure and deterministic.
 */
import type { ApprovalDecisionInput } from '../deterministic/messages';
import { alwaysPatternProblem } from '../deterministic/policy/always';
import type { Policy } from '../deterministic/policy/schema';
import type { TurnState } from '../deterministic/session';

/** Refuses a decision that does not match what is pending, before anything is written to history. */
export function validateDecision(p: TurnState['pending'], d: ApprovalDecisionInput, policy: Policy | undefined): void {
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
