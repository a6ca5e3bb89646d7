/**
 * evalWorkflow fans a suite out: one trial per case and trial number, at most `concurrency`
 * at once; the limit is halved when a trial's model calls were rate limited (429) and raised
 * back by one after a run of trials without. A trial is a fresh session id (its own workspace
 * with the case's fixtures, its own memory namespace), one turn whose people are the case's
 * scripted answers and approvals, then the checks. The eval runs each trial itself: the turn is
 * its child and the fixtures and checks its local activities, so a trial is one workflow (its
 * turn). Durable: a killed CLI or worker loses nothing, and every trial is counted once. (Evals
 * from before `eval-trials-inline` ran each trial as an evalCaseWorkflow of its own, the turn's
 * parent; they are outside the support window, docs/durability.md, and that workflow is gone.)
 * From `eval-continue-as-new` each trial's report goes to the store as its checks end, a run
 * continues as new after a few hundred trials (carry.ts), and the result is the totals and cases
 * with a count of the stored runs, which `harness eval` reads back: a suite of any size has a
 * bounded history and result. Its trials' sandboxes are closed on their sandbox host. A trial its
 * turn's result alone judges is judged in this workflow, its report written with a batch of
 * others' (trial-reports.ts); its turn is told the turn patch set (turn/patches.ts).
 */
import { condition, continueAsNew, deprecatePatch, executeChild, patched, proxyActivities, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { CaseReport, EvalCase, EvalReport, TrialReport, TrialTally } from '../../deterministic/eval';
import { rootCauseMessage } from '../../deterministic/errors';
import type { TurnInput } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import { caseReport, summarize } from '../../deterministic/eval-report';
import { DEFAULT_COMPRESSION } from '../../deterministic/context/plan';
import { turnWorkflow } from '../turn/turn';
import { evalProgressQuery, turnStatusSignal } from '../../deterministic/messages';
import { forkResume } from '../session/fork';
import { discoverActivity, type Activities } from '../activity-options';
import type { BudgetLimit } from '../../deterministic/budget';
import { mcpScopeOf } from '../../deterministic/mcp-scope';
import { TOOLS_BY_REF } from '../turn/mcp';
import { TURN_PATCH_SET } from '../turn/patches';
import { EvalSpend } from './budget';
import { closeSandbox } from '../sandbox-host';
import { DEFAULT_TRIALS_PER_RUN, type EvalCarry } from './carry';
import { workflowNow } from '../workflow-clock';
import { TrialPreparation } from './trial-prepare';
import { TrialReports } from './trial-reports';


export interface EvalInput {
  evalId: string;
  suite: string;
  /** `provider:model`, or `scripted` when each case brings its model_script. */
  model: string;
  cases: EvalCase[];
  /** Trials of a case without its own `trials`. */
  trials: number;
  concurrency: number;
  /** The sessions' configuration (a case sets its script, step limit and memory namespace). */
  config: SessionConfig;
  /** Each case answers with its own model_script. */
  scriptedPerCase: boolean;
  /** `eval --budget`: once the trials run have spent this, no more start. */
  budget?: BudgetLimit;
  /** Trials a run starts before it continues as new (default DEFAULT_TRIALS_PER_RUN; tests set a few). */
  trialsPerRun?: number;
  /** What the runs before this one left (carry.ts); absent in the first. */
  carry?: EvalCarry;
}

const { planEvalFork, prepareFork, finishEvalReport } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1s', maximumAttempts: 5 },
});
// Short work on the worker's own disk and store: local activities (no server round trip), as
// each trial's overhead is what bounds a suite's speed.
const { prepareEvalCase, checkEvalTrial, checkAndKeepEvalTrial, keepEvalTrial } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '500ms', maximumAttempts: 5 },
});

/** Runs every trial of the suite and returns the report. */
export async function evalWorkflow(input: EvalInput): Promise<EvalReport> {
  const carry = input.carry;
  const startedAt = carry?.startedAt ?? workflowInfo().startTime.toISOString();
  const jobs = input.cases.flatMap((c) => Array.from({ length: c.trials ?? input.trials }, (_, i) => ({ c, trial: i + 1 })));
  const trials: TrialReport[] = [];
  let limit = carry?.limit ?? Math.max(1, input.concurrency);
  let lowered = carry?.lowered ?? 0;
  let calm = carry?.calm ?? 0;
  let running = 0;
  let passed = carry?.passed ?? 0;
  let done = carry?.done ?? 0;
  const first = carry?.next ?? 0;
  let next = first;
  // `--budget`: what the trials spent, and whether the eval stopped starting them.
  const spent = new EvalSpend(input.budget, carry?.spent);
  // What the run's trials share of their turns' preparation, asked once (trial-prepare.ts).
  const preparation = new TrialPreparation();
  // Reports of trials judged here, written a batch at a time (trial-reports.ts).
  const reports = new TrialReports(input.evalId);
  // Every eval of the support window runs its trials itself (and has this marker).
  deprecatePatch('eval-trials-inline');
  // Reports in the store, and a new run every few hundred trials (carry.ts); evals from before keep theirs in memory.
  const keep = patched('eval-continue-as-new');
  const perRun = Math.max(1, input.trialsPerRun ?? DEFAULT_TRIALS_PER_RUN);
  // This run has started its share: it starts no more, and continues as new once they are in.
  const full = () => keep && (next - first >= perRun || workflowInfo().continueAsNewSuggested);
  const more = () => next < jobs.length && !spent.stopped && !full();
  // The trials' turns report their waits to their parent; with scripted people there are none to act on.
  setHandler(turnStatusSignal, () => undefined);
  setHandler(evalProgressQuery, () => ({
    eval_id: input.evalId,
    total: jobs.length,
    done,
    passed,
    failed: done - passed,
    running,
    concurrency: limit,
    started_at: startedAt,
    ...(!more() && !full() && done === next ? { finished: true } : {}),
    ...(spent.stopped ? { stopped: true } : {}),
  }));

  // Before any trial starts: what this run's trials share of their turns' preparation (trial-prepare.ts).
  await preparation.ask(jobs.slice(first, first + perRun).map((j) => ({ c: j.c, config: caseConfig(input, j.c, trialSessionId(input.evalId, j.c.id, j.trial)) })));

  const run = async (job: (typeof jobs)[number]) => {
    running++;
    const sessionId = trialSessionId(input.evalId, job.c.id, job.trial);
    const trial: EvalCaseInput = { evalId: input.evalId, sessionId, case: job.c, trial: job.trial, config: caseConfig(input, job.c, sessionId) };
    let r: TrialReport | TrialTally;
    try {
      r = await runTrial(trial, keep, preparation, reports);
    } catch (err) {
      const failed = harnessFailure(job.c, job.trial, sessionId, rootCauseMessage(err));
      if (keep) await keepEvalTrial({ evalId: input.evalId, report: failed });
      r = failed;
    }
    running--;
    spent.add(r);
    if (!keep) trials.push(r as TrialReport);
    done++;
    if (r.passed) passed++;
    // Rate limited: halve at once. Calm: one more after twice the limit's worth of trials.
    if (r.rate_limited > 0) {
      if (limit > 1) lowered++;
      limit = Math.max(1, Math.floor(limit / 2));
      calm = 0;
    } else if (++calm >= 2 * limit && limit < input.concurrency) {
      limit++;
      calm = 0;
    }
  };

  for (;;) {
    // A trial starts only while the budget holds (checked again each time one ends).
    while (more() && running < limit && spent.allows()) void run(jobs[next++]!);
    if (!more() && done === next) break;
    // Until a slot frees for the next job, or (all started, or the budget spent, or this run's share started) the last trial is in.
    await condition(() => (more() && running < limit) || (!more() && done === next) || reports.full);
    if (reports.full) await reports.flush();
  }
  // Every report of this run is in the store before its report is built or the next run starts.
  await reports.flush();
  // This run's share is done and trials are left: the next run starts them (the children are all closed).
  if (keep && next < jobs.length && !spent.stopped) {
    const handOn: EvalCarry = { startedAt, next, done, passed, limit, lowered, calm, spent: spent.state() };
    return continueAsNew<typeof evalWorkflow>({ ...input, carry: handOn });
  }
  const notRun = jobs.slice(next).map((j) => ({ case_id: j.c.id, trial: j.trial }));
  const head = { eval_id: input.evalId, suite: input.suite, model: input.model, started_at: startedAt, concurrency: { max: input.concurrency, final: limit, lowered } };
  if (keep) {
    // Built from the stored runs, returned without them (eval-keep.ts).
    const heads = input.cases.map((c) => ({ id: c.id, line: c.line, ...(c.expect ? { expect: c.expect } : {}), ...(c.expect_reason ? { expect_reason: c.expect_reason } : {}) }));
    const built = await finishEvalReport({ evalId: input.evalId, cases: heads, notRun });
    return { ...head, totals: built.totals, cases: built.cases, ...(input.budget ? { budget: spent.report(notRun) } : {}), stored_runs: built.stored_runs };
  }
  const cases: CaseReport[] = input.cases.map((c) => {
    const left = notRun.filter((j) => j.case_id === c.id).length;
    return { ...caseReport(c, trials.filter((t) => t.case_id === c.id)), ...(left ? { not_run: left } : {}) };
  });
  return {
    ...head,
    totals: summarize(cases),
    cases,
    ...(input.budget ? { budget: spent.report(notRun) } : {}),
  };
}

/** One trial of a case: its session id, its number and the session config it runs with. */
interface EvalCaseInput {
  evalId: string;
  sessionId: string;
  case: EvalCase;
  trial: number;
  config: SessionConfig;
}

/**
 * One trial: fixtures in a fresh workspace, one turn with scripted people, then the checks. The
 * trial is timed from the local activity that writes its fixtures; without fixtures (from
 * `eval-trial-lean`), from the workflow's clock, deterministic on replay.
 */
async function runTrial(input: EvalCaseInput, keep: boolean, preparation: TrialPreparation, reports: TrialReports): Promise<TrialReport | TrialTally> {
  const { sessionId, config } = input;
  const c = input.case;
  // A case without fixtures has nothing to prepare: its trial is timed from the workflow's clock
  // (the time of the task that starts it), which saves every such trial a local activity.
  const bare = Object.keys(c.fixtures).length === 0 && patched(TRIAL_LEAN);
  const { startedAtMs } = bare ? { startedAtMs: workflowNow() } : await prepareEvalCase({ sessionId, fixtures: c.fixtures });
  const servers = config.mcp?.servers ?? [];
  const mcpTools = servers.length ? await discoverActivity(servers)({ sessionId, ...mcpScopeOf(config), servers, ...(patched(TOOLS_BY_REF) ? { byRef: true as const } : {}) }) : undefined;
  const turnId = `${sessionId}/turn-1`;
  // A trial with nothing of its own to prepare gets what the run's trials share, and its turn skips prepareTurn.
  const prepared = bare ? preparation.of(c, config) : undefined;
  let turn: TurnInput = {
    sessionId,
    turn: 1,
    turnId,
    config,
    history: [],
    memory: {},
    userMessage: c.input,
    modelCallBase: 0,
    ...(c.max_steps ? { maxSteps: c.max_steps } : {}),
    ...(mcpTools ? { mcpTools } : {}),
    evalHumans: { approvals: c.approvals, answers: c.answers },
    ...(prepared ? { prepared } : {}),
    // Its turn runs this code: it takes the turn patch set from here, with no marker of its own.
    ...(patched(TURN_SET_GIVEN) ? { patchSet: TURN_PATCH_SET } : {}),
  };
  if (c.from) {
    // A case from a recorded run: its conversation at the step, copied; no model call before it.
    const spec = await planEvalFork({ turnId: c.from.turn, step: c.from.step });
    const prepared = await prepareFork({ sessionId, fork: { ...spec, modelCallBase: 0 } });
    const start = forkResume({ ...spec, modelCallBase: 0 }, prepared);
    // The case's own step limit wins over the recorded turn's.
    turn = { ...turn, ...start.turn, ...(c.max_steps ? { maxSteps: c.max_steps } : {}), userMessage: c.input || start.userMessage };
  }
  const result = await executeChild(turnWorkflow, { workflowId: turnId, args: [turn] });
  const checked = { sessionId, turnId, case: c, trial: input.trial, result, startedAtMs };
  // A trial its turn's result alone judges is judged here, its report written with its batch.
  const here = keep ? reports.checkHere(checked, result, startedAtMs) : undefined;
  const report = here ?? (keep ? await checkAndKeepEvalTrial({ ...checked, evalId: input.evalId }) : await checkEvalTrial(checked));
  // A trial that ran commands has a sandbox it no longer needs (its workspace and store stay
  // for `harness trace`); one that never ran a command has none.
  // Removed by an activity that heartbeats: a worker lost meanwhile holds the eval up seconds, not minutes.
  if (result.storedToolCalls?.length || result.toolCalls.some((t) => t.name === 'run_shell')) {
    // On the trial's sandbox host, where its container is (evals from before closed it on the shared queue).
    await (keep ? closeSandbox(sessionId, result.host, config.limits.hostTimeoutMs) : closeSandbox(sessionId));
  }
  return report;
}

/** Trials that skip the work they do not need (the patch of evals that run them so). */
const TRIAL_LEAN = 'eval-trial-lean';

/** Trials whose turns are told the turn patch set in their input (the patch of evals that tell them). */
const TURN_SET_GIVEN = 'eval-turn-patch-set';

/** A trial's session id: the eval, the case and the trial. */
export function trialSessionId(evalId: string, caseId: string, trial: number): string {
  return `${evalId}-${caseId}-t${trial}`.slice(0, 128);
}

/** The session config of a case's trials: its script, its step limit, a memory namespace of its own. */
function caseConfig(input: EvalInput, c: EvalCase, sessionId: string): SessionConfig {
  const cfg = input.config;
  return {
    ...cfg,
    ...(input.scriptedPerCase ? { model: { provider: 'scripted', model: 'scripted', script: c.model_script ?? { steps: [] } } } : {}),
    ...(c.max_steps ? { limits: { ...cfg.limits, maxSteps: c.max_steps } } : {}),
    ...(cfg.memory ? { memory: { ...cfg.memory, namespace: `eval:${sessionId}` } } : {}),
    ...(c.context_window
      ? { compression: { ...(cfg.compression ?? DEFAULT_COMPRESSION), contextWindow: c.context_window, outputReserve: Math.floor(c.context_window / 6), threshold: 0.5, keepTail: 2 } }
      : {}),
  };
}

/** A trial whose workflow itself failed: counted, attributed to the harness. */
function harnessFailure(c: EvalCase, trial: number, sessionId: string, why: string): TrialReport {
  return {
    case_id: c.id,
    trial,
    passed: false,
    checks: [],
    failure: { reason: 'HARNESS_ERROR', layer: 'harness', detail: why },
    terminated_by: 'failed',
    answer: '',
    steps: 0,
    tool_calls: 0,
    tool_errors: 0,
    recovered: false,
    compressions: 0,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    rate_limited: 0,
    elapsed_ms: 0,
    session_id: sessionId,
    workflow_id: `${sessionId}/turn-1`,
  };
}
