/** What `harness eval` and `harness eval status` do (cli/commands/eval.ts defines the command and loads this when it runs). */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CaseReport, EvalReport } from '../../deterministic/eval';
import { summarize } from '../../deterministic/eval-report';
import { EvalCache, harnessVersion } from '../../evals/runner/cache';
import { mergeCached, splitCached, storeTrials } from '../../evals/runner/cached-run';
import { workflowBundlePath } from '../../machine/paths';
import { loadFileConfig, resolveSessionConfig } from '../../config/resolve';
import { resolvePricing } from '../../config/prices';
import type { BudgetLimit } from '../../deterministic/budget';
import type { SessionConfig } from '../../deterministic/session-config';
import { compareReports, comparisonLines, loadReport } from '../../evals/runner/compare';
import { reportHtml } from '../../evals/runner/report-html';
import { budgetStopLine, reasonText, reportMarkdown } from '../../evals/runner/report-text';
import { followEval, newEvalId, startEval, type EvalOptions } from '../../evals/runner/run';
import { readStoredRuns } from '../../evals/runner/stored-runs';
import { evalProgressPrinter } from '../eval-progress';
import { loadSuite, type Suite } from '../../evals/runner/suite';
import { UsageError } from '../../machine/errors';
import { requireWorker } from '../../client/require-worker';
import type { CliContext } from '../context';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { EXIT, print, printJson, say, sayInPlace } from '../output';
import { noWorkerHint, workerStarting } from '../wait';
import { WaitNotes } from '../wait-notes';

export interface EvalFlags {
  concurrency: number;
  trials: number;
  model?: string;
  out?: string;
  compare?: string;
  policy?: string;
  config?: string;
  json?: boolean;
  wait: boolean;
  cache: boolean;
  budget?: BudgetLimit;
  /** Exit 0 when cases fail (only a case that misses its `expect`, or a regression, fails the run). */
  reportOnly?: boolean;
}

export async function runEval(ctx: CliContext, suiteArg: string, evalIdArg: string | undefined, o: EvalFlags): Promise<void> {
  if (suiteArg === 'status') {
    if (!evalIdArg) throw new UsageError('`harness eval status` needs the eval id', 'harness eval status eval-YYYYMMDD-HHMMSS-xxxxxx');
    const base = o.compare ? loadReport(o.compare) : undefined;
    const client = await ctx.client();
    return finish(ctx, await follow(ctx, client, evalIdArg, o), o, base);
  }
  if (evalIdArg) throw new UsageError(`unexpected argument ${evalIdArg}`, 'harness eval <suite.jsonl> [options], or harness eval status <eval-id>');
  const suite = loadSuite(suiteArg);
  const base = o.compare ? loadReport(o.compare) : undefined;
  const modelText = o.model ?? ctx.env.HARNESS_MODEL ?? 'scripted';
  const scriptedPerCase = modelText === 'scripted';
  const resolved = resolveSessionConfig({ model: scriptedPerCase ? 'scripted-per-case' : modelText, ...(o.config ? { config: o.config } : {}), ...(o.policy ? { policy: o.policy } : {}) }, ctx.env, process.cwd(), say);
  if (o.config) ctx.configFile = path.resolve(o.config);
  const config = scriptedPerCase ? scriptedConfig(resolved, o.config, ctx.env) : resolved;
  // A budget in money needs the trials' model priced (a scripted one is free unless priced).
  if (o.budget?.usd !== undefined && !config.pricing?.price && !config.pricing?.free) {
    throw new UsageError(
      `--budget $${o.budget.usd}: the model ${config.model.model} has no price, so money cannot be counted`,
      'add its price to "prices" in the config file (USD per million tokens), or give the budget in tokens',
    );
  }
  const client = await ctx.client({ autostart: true });
  await requireWorker(client, ctx.settings.taskQueue, { hint: noWorkerHint(ctx), starting: () => workerStarting(ctx) });
  const model = scriptedPerCase ? 'scripted' : `${config.model.provider}:${config.model.model}`;
  const opts = { concurrency: o.concurrency, trials: o.trials, config, model, scriptedPerCase, ...(o.budget ? { budget: o.budget } : {}) };
  // A scripted model costs nothing: only runs against a real one use the cache.
  const use = o.cache && !scriptedPerCase ? { cache: new EvalCache(path.join(ctx.home, 'evals', 'cache')), version: harnessVersion(workflowBundlePath()) } : undefined;
  const { run, cached } = use ? splitCached(suite, opts, use) : { run: suite.cases, cached: [] };
  if (cached.length) say(`${cached.length} unchanged case(s) taken from the eval cache (--no-cache runs them again)`);
  if (!run.length) return finish(ctx, cachedOnly(suite, opts, cached), o, base);
  const evalId = await startEval(client, ctx.settings.taskQueue, { ...suite, cases: run }, opts);
  say(`eval ${evalId}: ${run.length} cases from ${suite.file}; follow it again with \`harness eval status ${evalId}\``);
  if (!o.wait) {
    if (o.json) printJson({ eval_id: evalId });
    return;
  }
  const report = mergeCached(await follow(ctx, client, evalId, o), cached, suite);
  if (use) storeTrials(report, suite, opts, use);
  finish(ctx, report, o, base);
}

async function follow(ctx: CliContext, client: Awaited<ReturnType<CliContext['client']>>, evalId: string, o: EvalFlags): Promise<EvalReport> {
  const tty = Boolean(process.stderr.isTTY) && !o.json;
  const notes = new WaitNotes();
  const report = await followEval(
    client,
    evalId,
    evalProgressPrinter({ tty, say, sayInPlace }),
    500,
    // Temporal or the worker not answering: one line, and the follow goes on (the eval does too).
    (t) => notes.trouble(t),
    // The trial reports of an eval that kept them in the store (a store out of reach: said, and the totals stand).
    (r) => readStoredRuns(r, ctx.home, ctx.env, (line) => say(`note: ${line}`)),
  );
  if (tty) say('');
  return report;
}

function finish(ctx: CliContext, report: EvalReport, o: EvalFlags, base?: EvalReport): void {
  const out = path.resolve(o.out ?? path.join(ctx.home, 'evals', `${report.eval_id}.json`));
  mkdirSync(path.dirname(out), { recursive: true });
  const stem = out.replace(/\.json$/, '');
  const cmp = base ? compareReports(base, report) : undefined;
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${stem}.md`, reportMarkdown(report));
  writeFileSync(`${stem}.html`, reportHtml(report, cmp));
  if (o.json) printJson(report);
  else print(reportMarkdown(report).trimEnd());
  say(`report: ${out} (and .md, .html)`);
  if (report.budget?.stopped) say(budgetStopLine(report.budget));
  // A case the budget left unrun has no verdict to miss.
  const ran = report.cases.filter((c) => c.trials > 0);
  const missed = ran.filter((c) => c.expect && (c.expect === 'pass') !== c.passed);
  for (const c of missed) say(`unexpected: ${c.id} was designed to ${c.expect} but ${c.passed ? 'passed' : 'failed'}`);
  // A CI gate: a case without `expect` is meant to pass, so its failure fails the run too
  // (--report-only leaves those to the report).
  const failed = o.reportOnly ? [] : ran.filter((c) => !c.expect && !c.passed);
  for (const c of failed) say(`failed: ${c.id} (${c.passes} of ${c.trials} trial(s) passed${reasonOf(c)})`);
  if (failed.length) say(`${failed.length} case(s) failed: exit 1 (--report-only reports them without failing the run)`);
  let code: number = missed.length || failed.length ? EXIT.error : EXIT.ok;
  if (cmp) {
    for (const line of comparisonLines(cmp)) say(escapeForTerminal(line));
    if (cmp.regressions.length) code = EXIT.error;
  }
  process.exitCode = code;
}

/** The first failed trial's reason, as the report gives it. */
function reasonOf(c: CaseReport): string {
  const first = c.runs.find((t) => !t.passed);
  return first?.failure ? `: ${reasonText(first)}` : '';
}

/** The report of a suite whose every case came from the cache (nothing ran). */
function cachedOnly(suite: Suite, o: EvalOptions, cases: CaseReport[]): EvalReport {
  return {
    eval_id: newEvalId(),
    suite: suite.file,
    model: o.model,
    started_at: new Date().toISOString(),
    concurrency: { max: o.concurrency, final: o.concurrency, lowered: 0 },
    totals: summarize(cases),
    cases,
    cached_cases: cases.length,
  };
}

/** The sessions' config when each case brings its script: the scripted model, priced as `scripted` (free unless the config prices it). */
function scriptedConfig(resolved: SessionConfig, configFile: string | undefined, env: NodeJS.ProcessEnv): SessionConfig {
  const model = { provider: 'scripted' as const, model: 'scripted', script: { steps: [] } };
  const { config } = loadFileConfig(configFile, env, process.cwd());
  return { ...resolved, model, pricing: resolvePricing(model, config.prices) };
}
