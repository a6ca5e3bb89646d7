/** What an `--always` approval grants, said back to the person who gave it. Pure. */
import { alwaysRuleFor, describeGrant } from '../deterministic/policy/always';
import type { Policy } from '../deterministic/policy/schema';
import type { PendingApproval } from '../deterministic/session';

/** One line per rule the approval of these calls adds to the session (duplicates once). */
export function grantsOf(calls: readonly PendingApproval[], policy: Policy | undefined, pattern?: string): string[] {
  const lines = calls.map((c) => describeGrant(alwaysRuleFor({ tool: c.tool, risk: c.risk, args: c.args as Record<string, unknown> }, policy, pattern)));
  return [...new Set(lines)];
}
