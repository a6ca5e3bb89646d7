/** What the policy said of a call a running turn ran as a local activity (see ranLocally). */
import { builtinRegistry } from '../../deterministic/builtin-tools';
import { decide } from '../../deterministic/policy/decide';
import type { PolicyRecord } from '../../deterministic/call-records';
import type { Timeline } from './timeline';

const REGISTRY = builtinRegistry();

/**
 * The verdict on a call that ran as a local activity, while its turn runs: a marker holds no
 * input, and the record comes with the turn's result. The policy is deterministic, so it is
 * worked out again from the turn's own policy and session rules; only an `allow` is told (the
 * call ran, so it was allowed), and the turn's record replaces it once the turn ends.
 */
export function ranLocally(t: Timeline, name: string, args: unknown): PolicyRecord | undefined {
  const policy = t.input?.config?.policy;
  const def = REGISTRY.get(name);
  if (!policy || !def || !args || typeof args !== 'object' || Array.isArray(args)) return undefined;
  try {
    const d = decide(policy, { tool: name, risk: def.risk, args: args as Record<string, unknown> }, t.input?.sessionRules ?? []);
    return d.decision === 'allow' ? { decision: 'allow', reason: d.reason, ...(d.rule ? { rule: d.rule } : {}) } : undefined;
  } catch {
    return undefined;
  }
}
