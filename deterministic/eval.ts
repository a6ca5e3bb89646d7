/**
 * Eval suites: the shape of a case (validated by evals/runner/suite.ts), of one trial's outcome and
 * of the report. Shared by the CLI, the eval workflows and the check activity; pure.
 */
import type { Usage } from './types';
import type { BudgetLimit } from './budget';

/** A check on a trial's outcome. `value` is text, a count or an error type as the type says. */
export type EvalCheck =
  | { type: 'contains' | 'not_contains' | 'regex'; value: string }
  | { type: 'terminated_by'; value: string }
  | { type: 'tool_called' | 'tool_not_called'; name: string }
  | { type: 'error_type_seen' | 'error_type_not_seen'; value: string }
  | { type: 'approval_requested'; name?: string }
  | { type: 'file_exists'; path: string }
  | { type: 'file_contains'; path: string; value: string }
  | { type: 'max_steps'; value: number }
  | { type: 'compressed'; value?: boolean };

/** How a trial's approvals are decided: all approved, all denied, or per call (first match wins; the rest denied). */
export type EvalApprovals = 'approve' | 'deny' | { tool: string; approve: boolean; args_contain?: string }[];

/** One case of a suite, as validated. */
export interface EvalCase {
  id: string;
  input: string;
  fixtures: Record<string, string>;
  answers: string[];
  approvals: EvalApprovals;
  max_steps?: number;
  /** Compress as a model with this context window would (tokens): cases about compression. */
  context_window?: number;
  model_script?: unknown;
  checks: EvalCheck[];
  trials?: number;
  /** Start from a recorded run: fork its conversation at this step (no model calls before it). */
  from?: { turn: string; step: number };
  /** The verdict the case is designed to get (shipped suites hold cases designed to fail). */
  expect?: 'pass' | 'fail';
  /** For a case designed to fail: the reason it should be given. */
  expect_reason?: FailureReason;
  /** The line of the suite file it came from. */
  line: number;
}

/** Why a trial failed, and in which layer. */
export type FailureLayer = 'model' | 'tool' | 'environment' | 'harness';
export const FAILURE_REASONS = [
  'MAX_STEPS_EXCEEDED',
  'TOOL_SELECTION_ERROR',
  'INVALID_ARGUMENTS',
  'FILE_NOT_FOUND_UNRECOVERED',
  'COMMAND_TIMEOUT',
  'CONTEXT_LOSS',
  'FINAL_ANSWER_INCOMPLETE',
  'PERMISSION_DENIED',
  'MODEL_UNAVAILABLE',
  'TOOL_UNAVAILABLE',
  'REPEATED_ACTION',
  'BUDGET_EXCEEDED',
  'HARNESS_ERROR',
  /** A check failed that none of the reasons above explains: the check names itself (detail). */
  'CHECK_FAILED',
  'UNKNOWN',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

export interface CheckResult {
  check: EvalCheck;
  passed: boolean;
  /** What was found, when the check failed. */
  detail?: string;
}

/** One trial of one case. */
export interface TrialReport {
  case_id: string;
  trial: number;
  passed: boolean;
  checks: CheckResult[];
  failure?: { reason: FailureReason; layer: FailureLayer; detail: string };
  terminated_by: string;
  answer: string;
  steps: number;
  tool_calls: number;
  tool_errors: number;
  /** A tool error happened and the trial still passed. */
  recovered: boolean;
  compressions: number;
  usage: Usage;
  /** Model call attempts that failed with 429 (the eval lowers its concurrency). */
  rate_limited: number;
  elapsed_ms: number;
  /** The trial's session and turn: `harness trace <workflow_id>`. */
  session_id: string;
  workflow_id: string;
  /** Taken from the eval cache (an unchanged case run before), not run again. */
  cached?: boolean;
  /** What the trial cost, by the ledger of its turn's history (usd null: the model has no price). */
  cost?: TrialCost;
}

/** A trial's cost: all its tokens and money, and the part failed attempts wasted. */
export interface TrialCost {
  total_tokens: number;
  usd: number | null;
  retry_waste_tokens: number;
  retry_waste_usd: number | null;
}

/** One case over its trials. */
export interface CaseReport {
  id: string;
  line: number;
  expect?: 'pass' | 'fail';
  expect_reason?: FailureReason;
  trials: number;
  passes: number;
  passed: boolean;
  pass_at_k: number;
  pass_hat_k: number;
  runs: TrialReport[];
  /** Trials the eval did not start (its budget ran out). */
  not_run?: number;
}

export interface EvalTotals {
  cases: number;
  trials: number;
  passed_trials: number;
  pass_rate: number;
  pass_at_k: number;
  pass_hat_k: number;
  failure_reasons: Record<string, number>;
  failure_layers: Record<string, number>;
  avg_steps: number;
  tool_error_rate: number;
  recovery_rate: number;
  compressions: number;
  usage: Usage;
  /** The slowest trial. */
  slowest_trial_ms: number;
  /** What the trials cost, and per trial (usd null when a trial's model has no price). */
  cost?: { total_tokens: number; usd: number | null; tokens_per_trial: number; usd_per_trial: number | null; retry_waste_usd: number | null };
}

/** `eval --budget`: the ceiling, what the trials spent, and whether the eval stopped starting trials. */
export interface EvalBudgetReport {
  limit: BudgetLimit;
  spent: { total_tokens: number; usd: number | null };
  stopped: boolean;
  /** The trials never started, by case. */
  not_run: { case_id: string; trial: number }[];
}

export interface EvalReport {
  eval_id: string;
  suite: string;
  model: string;
  started_at: string;
  /** Filled in by the CLI from the eval workflow's close time. */
  finished_at?: string;
  wall_ms?: number;
  concurrency: { max: number; final: number; lowered: number };
  /** Cases taken whole from the eval cache. */
  cached_cases?: number;
  totals: EvalTotals;
  cases: CaseReport[];
  budget?: EvalBudgetReport;
  /**
   * The trial reports are in the message store (this many), not in `cases[].runs`: an eval that
   * keeps them there returns its totals and cases only, and `harness eval` reads the runs back.
   */
  stored_runs?: number;
}

/** What the eval workflow keeps of a trial whose report is in the store: what it counts and adapts by. */
export type TrialTally = Pick<TrialReport, 'case_id' | 'trial' | 'passed' | 'rate_limited' | 'cost'>;

/** The part of a case its report names (the rest of the case stays with the eval's input). */
export type CaseHead = Pick<EvalCase, 'id' | 'line' | 'expect' | 'expect_reason'>;

/** What the eval workflow's progress query answers. */
export interface EvalProgress {
  eval_id: string;
  total: number;
  done: number;
  passed: number;
  failed: number;
  running: number;
  concurrency: number;
  started_at: string;
  finished?: boolean;
  /** The budget ran out: no more trials start. */
  stopped?: boolean;
}

/** Binomial coefficient as a float (n, k small). */
function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

/**
 * pass@k (the chance at least one of k trials drawn from the n run passes; the unbiased
 * estimator 1 − C(n−c, k)/C(n, k)) and pass^k (all k pass: C(c, k)/C(n, k)), for c passes of n.
 */
export function passAtK(n: number, c: number, k = n): { pass_at_k: number; pass_hat_k: number } {
  if (n === 0 || k === 0) return { pass_at_k: 0, pass_hat_k: 0 };
  const all = choose(n, k);
  return { pass_at_k: 1 - choose(n - c, k) / all, pass_hat_k: choose(c, k) / all };
}
