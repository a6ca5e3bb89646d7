/**
 * A trial's report from what was found: its checks, the failure's reason and layer, its counts
 * and its cost. Pure: the checks activity builds it (activities/eval.ts), and so does the eval
 * workflow itself for a trial whose facts are all in its turn's result (checkedInResult).
 */
import type { EvalCase, TrialCost, TrialReport } from './eval';
import { attribute, runCheck, type TrialFacts } from './eval-checks';
import { totalOf, type CallKind, type Tally } from './ledger';
import { usd } from './pricing';
import type { TurnResult } from './session';

/** Which trial a report is of. */
export interface TrialOf {
  case: EvalCase;
  trial: number;
  sessionId: string;
  turnId: string;
}

/** The report of a trial from its facts, its cost (when its turn's ledger is known), its rate-limited attempts and how long it took. */
export function trialReport(t: TrialOf, facts: TrialFacts & { result: TurnResult }, o: { cost?: TrialCost; rateLimited: number; elapsedMs: number }): TrialReport {
  const r = facts.result;
  const checks = t.case.checks.map((c) => runCheck(c, facts));
  const passed = checks.every((c) => c.passed) && r.terminated_by !== 'failed';
  const toolErrors = facts.calls.filter((c) => !c.ok).length;
  return {
    case_id: t.case.id,
    trial: t.trial,
    passed,
    checks,
    ...(passed ? {} : { failure: attribute(facts, checks) }),
    terminated_by: r.terminated_by,
    answer: r.answer,
    steps: r.steps,
    tool_calls: facts.calls.length,
    tool_errors: toolErrors,
    recovered: passed && toolErrors > 0,
    compressions: r.compressions?.length ?? 0,
    usage: r.usage,
    rate_limited: o.rateLimited,
    ...(o.cost ? { cost: o.cost } : {}),
    elapsed_ms: Math.max(0, o.elapsedMs),
    session_id: t.sessionId,
    workflow_id: t.turnId,
  };
}

/** A trial's cost from its turn's ledger: all its tokens and money, and what failed attempts wasted. */
export function trialCost(l: { byKind: Record<CallKind, Tally>; total: Tally }): TrialCost {
  const money = (n: number | undefined) => (n === undefined ? null : usd(n));
  return {
    total_tokens: l.total.total_tokens,
    usd: money(l.total.nanoUsd),
    retry_waste_tokens: l.byKind.retry_waste.total_tokens,
    retry_waste_usd: money(l.byKind.retry_waste.nanoUsd),
  };
}

/**
 * Whether a trial's checks need nothing but its turn's result: no workspace file, no call records
 * kept in the store, no retried model call (its rate limits are read from history), and the exact
 * tally its turn recorded for the cost. Such a trial's report is built where its turn ends.
 */
export function checkedInResult(c: EvalCase, r: TurnResult): boolean {
  if (c.checks.some((k) => k.type === 'file_exists' || k.type === 'file_contains')) return false;
  return !r.storedToolCalls?.length && !r.retriedAttempts && r.ledger?.exact === true;
}

/** The report of a trial checkedInResult says is judged by its turn's result alone. */
export function resultReport(t: TrialOf, r: TurnResult, elapsedMs: number): TrialReport {
  const tally = r.ledger!;
  return trialReport(t, { result: r, calls: r.toolCalls, files: {} }, { cost: trialCost({ byKind: tally.byKind, total: totalOf(tally) }), rateLimited: 0, elapsedMs });
}
