/**
 * Starting an eval (the evalWorkflow) and following it: progress by query until it closes, then
 * the report with its wall time. A follower that stops (Ctrl-C, a killed CLI) loses nothing:
 * `harness eval status <id>` follows the same workflow again.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { EvalProgress, EvalReport } from '../../deterministic/eval';
import type { SessionConfig } from '../../deterministic/session-config';
import type { BudgetLimit } from '../../deterministic/budget';
import type { EvalInput } from '../../workflows/eval/eval';
import { evalProgressQuery } from '../../deterministic/messages';
import { UsageError, UserError } from '../../machine/errors';
import type { Suite } from './suite';
import { describeWorkflow } from '../../history/workflow-runs';
import { lookUntil, TroubleWait } from '../../client/trouble-wait';
import { look, troubleOf, type Trouble } from '../../client/wait-progress';

/** Largest eval input (the cases with their scripts) a workflow start carries. */
const MAX_INPUT_BYTES = 1536 * 1024;
/** Most trials one eval runs (each is a child workflow of the eval's history). */
export const MAX_TRIALS = 2000;

export interface EvalOptions {
  concurrency: number;
  trials: number;
  config: SessionConfig;
  model: string;
  scriptedPerCase: boolean;
  /** `--budget`: no trial starts once those run have spent it. */
  budget?: BudgetLimit;
  /** Trials one run of the eval workflow starts before it continues as new (default: the workflow's). */
  trialsPerRun?: number;
}

/** A new eval id: sortable by time. */
export function newEvalId(now = new Date()): string {
  return `eval-${now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)}-${randomBytes(3).toString('hex')}`;
}

/** Checks the suite against the options and starts the eval workflow; returns its id. */
export async function startEval(client: Client, taskQueue: string, suite: Suite, o: EvalOptions, evalId = newEvalId()): Promise<string> {
  if (o.scriptedPerCase) {
    const missing = suite.cases.filter((c) => !c.model_script && !c.from);
    if (missing.length) {
      throw new UsageError(
        `with the scripted model every case needs a model_script; ${missing.map((c) => `${c.id} (line ${c.line})`).slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''} have none`,
        'add model_script to those cases, or run the suite with a real model: --model <name>',
      );
    }
  }
  const trials = suite.cases.reduce((n, c) => n + (c.trials ?? o.trials), 0);
  if (trials > MAX_TRIALS) throw new UsageError(`the suite asks for ${trials} trials; one eval runs at most ${MAX_TRIALS}`, 'split the suite or lower --trials');
  const input: EvalInput = {
    evalId,
    suite: suite.file,
    model: o.model,
    cases: suite.cases,
    trials: o.trials,
    concurrency: o.concurrency,
    config: o.config,
    scriptedPerCase: o.scriptedPerCase,
    ...(o.budget ? { budget: o.budget } : {}),
    ...(o.trialsPerRun ? { trialsPerRun: o.trialsPerRun } : {}),
  };
  const bytes = Buffer.byteLength(JSON.stringify(input));
  if (bytes > MAX_INPUT_BYTES) throw new UsageError(`the suite is ${Math.round(bytes / 1024)} KiB with its scripts; an eval takes at most ${MAX_INPUT_BYTES / 1024} KiB`, 'split the suite');
  await client.workflow.start('evalWorkflow', { workflowId: evalId, taskQueue, args: [input] });
  return evalId;
}

/**
 * Follows an eval until it closes, calling `onProgress` as it goes; returns the report. Trouble
 * on the way (Temporal down or overloaded, no worker answering the progress query) is reported
 * through `onTrouble` and waited out: the eval goes on without us, so only a closed eval ends this.
 * An eval that kept its trial reports in the store returns them through `storedRuns`
 * (stored-runs.ts); without it the report has its totals and cases, and no runs.
 */
export async function followEval(
  client: Client,
  evalId: string,
  onProgress: (p: EvalProgress) => void,
  pollMs = 500,
  onTrouble?: (trouble: Trouble | undefined) => void,
  storedRuns?: (report: EvalReport) => Promise<EvalReport>,
): Promise<EvalReport> {
  const handle = client.workflow.getHandle(evalId);
  const pace = new ProgressPace(pollMs);
  const troubleWait = new TroubleWait({ deadline: Infinity, ...(onTrouble ? { onTrouble } : {}) });
  const described = await lookUntil(client, evalId, 'server', () => describeWorkflow(client, evalId), 10_000, troubleWait);
  if (!described) throw new UserError(`no eval ${evalId} in Temporal`, 'the eval id is printed when it starts (eval-YYYYMMDD-HHMMSS-xxxxxx)');
  if (described.type !== 'evalWorkflow') throw new UserError(`${evalId} is not an eval`, 'the eval id is printed when it starts (eval-YYYYMMDD-HHMMSS-xxxxxx)');
  for (;;) {
    // The result by long poll; one broken by an outage is started again.
    let outcome: { report: EvalReport } | { error: unknown } | undefined;
    const result = handle.result().then(
      (report) => void (outcome = { report: report as EvalReport }),
      (error: unknown) => void (outcome = { error }),
    );
    while (!outcome) {
      // Any other failure of the query (one that raced the close, say) is not ours to judge: the result tells.
      const progress = await look(client, evalId, 'query', () => handle.query(evalProgressQuery), 20_000).catch(() => undefined);
      if (progress?.ok) {
        troubleWait.clear();
        onProgress(progress.value);
        pace.looked(progress.value);
      }
      if (progress && !progress.ok && !outcome) await Promise.race([troubleWait.troubled(progress.trouble), result]);
      else await pace.wait(result, onProgress);
    }
    const got: { report: EvalReport } | { error: unknown } = outcome;
    if ('report' in got) {
      troubleWait.clear();
      const report = storedRuns ? await storedRuns(got.report) : got.report;
      const closed = (await lookUntil(client, evalId, 'server', () => handle.describe(), 10_000, troubleWait)).closeTime;
      if (closed) {
        report.finished_at = closed.toISOString();
        report.wall_ms = closed.getTime() - Date.parse(report.started_at);
      }
      return report;
    }
    const trouble = troubleOf(client, got.error, 'server');
    if (!trouble) throw got.error;
    await troubleWait.troubled(trouble);
  }
}

/**
 * When to ask an eval for its progress again. A query costs the worker, the server and the
 * follower about 10 ms of CPU together (about as much as an eval trial's own share). With trials
 * waiting on a model for seconds most answers are the last one again, so while nothing changes
 * the wait doubles, up to eight times `pollMs`. With many trials at once the counts change at
 * nearly every ask, so the wait after a change sets the rate: twice `pollMs` (a second by
 * default), which a progress line needs no faster; asking every `pollMs` there cost about 2 ms
 * of CPU a trial at 16 trials at once (bench:eval). Meanwhile the last progress is passed on
 * every `pollMs`, so a terminal's clock and ETA still move.
 */
export class ProgressPace {
  /** The last progress a look found. */
  latest: EvalProgress | undefined;
  private last: string | undefined;
  private waitMs: number;

  constructor(private readonly pollMs: number) {
    this.waitMs = pollMs;
  }

  /** What a look found: the next wait is twice `pollMs` after a change, twice the last one otherwise. */
  looked(p: EvalProgress): void {
    const seen = JSON.stringify([p.done, p.passed, p.running, p.finished, p.stopped]);
    this.waitMs = this.last === undefined || seen !== this.last ? this.pollMs * 2 : Math.min(this.waitMs * 2, this.pollMs * 8);
    this.last = seen;
    this.latest = p;
  }

  /** The wait before the next look (the eval's close ends it), passing the last progress on every `pollMs`. */
  async wait(closed: Promise<unknown>, onProgress: (p: EvalProgress) => void): Promise<void> {
    let over = false;
    void closed.then(() => (over = true));
    for (let waited = 0; waited < this.waitMs && !over; waited += this.pollMs) {
      await Promise.race([sleep(Math.min(this.pollMs, this.waitMs - waited)), closed]);
      if (!over && waited + this.pollMs < this.waitMs && this.latest) onProgress(this.latest);
    }
  }

  /** The wait the next look comes after (ms). */
  get nextWaitMs(): number {
    return this.waitMs;
  }
}

/** A progress line: a bar on a terminal, plain text elsewhere. */
export function progressLine(p: EvalProgress, elapsedMs: number, width = 24): string {
  const frac = p.total ? p.done / p.total : 0;
  const filled = Math.round(frac * width);
  const eta = p.done > 0 && p.done < p.total ? ` · ETA ${Math.round(((elapsedMs / p.done) * (p.total - p.done)) / 1000)} s` : '';
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${p.done}/${p.total} · ${p.passed} passed · ${p.failed} failed · ${p.running} running · ${Math.round(elapsedMs / 1000)} s${eta}`;
}
