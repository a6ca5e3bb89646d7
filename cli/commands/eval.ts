/**
 * `harness eval <suite.jsonl>`: run a suite as fan-out workflows and report; `harness eval
 * status <id>` follows a running eval again (or prints a finished one's report).
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { CliContext } from '../context';
import type { EvalFlags } from '../actions/eval';
import { parseBudgetAmount } from '../../config/budget-amount';

/** `--budget 200000` (tokens) or `--budget '$2.50'` (money). */
function parseBudget(value: string): { tokens: number } | { usd: number } {
  try {
    const { unit, amount } = parseBudgetAmount(value);
    return unit === 'usd' ? { usd: amount } : { tokens: amount };
  } catch (err) {
    throw new InvalidArgumentError(`${(err as Error).message} (${(err as { hint?: string }).hint ?? 'e.g. 200000 or $2.50'})`);
  }
}

const positive = (max: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw new InvalidArgumentError(`expected a whole number from 1 to ${max}`);
  return n;
};

// The action loads its implementation (cli/actions/eval.ts, and the Temporal client) when it runs.
export function registerEval(program: Command, ctx: CliContext): void {
  program
    .command('eval')
    .description('Run an eval suite (evals/*.jsonl) as fan-out workflows: one fresh session per case and trial, checks on each, a report (JSON, Markdown, HTML)')
    .argument('<suite>', 'the suite file, or `status` to follow an eval again: harness eval status <eval-id>')
    .argument('[eval-id]', 'with `status`: the eval to follow')
    .option('--concurrency <n>', 'trials at once (lowered on 429s, raised back slowly)', positive(64), 4)
    .option('--trials <k>', 'trials of each case without its own "trials"', positive(100), 1)
    .option('--model <model>', 'the model: `scripted` (each case\'s model_script; the default unless HARNESS_MODEL is set) or a model name for the OpenAI-compatible endpoint')
    .option('--out <file>', 'write the report here (JSON), with the Markdown (.md) and HTML (.html) beside it (default: HARNESS_HOME/evals/<eval-id>.json)')
    .option('--compare <base.json>', 'compare with a base report: per-case flips and metric deltas; exit 1 on a regression')
    .option('--policy <mode>', 'permission policy mode of the trials: strict, ask (default) or auto')
    .option('--config <file>', 'config file (default ./harness.config.json)')
    .option('--json', 'print the report as JSON instead of the Markdown summary')
    .option('--no-wait', 'start the eval and return its id')
    .option('--budget <amount>', 'stop starting trials once those run have spent this: tokens (200000) or money ($2.50); the report says what ran and what did not', parseBudget)
    .option('--no-cache', 'run every case again: by default (real models only) a case whose case, model, settings and harness are unchanged since a run is taken from the cache')
    .option('--report-only', 'report failed cases without failing the run: exit 1 only when a case misses its "expect" or --compare finds a regression')
    .addHelpText(
      'after',
      '\nExit codes: 0 every case got its verdict (pass, or "expect": "fail" for a case designed to fail); 1 a case failed, a case missed its "expect", or --compare found a regression (with --report-only: only the last two); 2 usage.\n' +
        'Stopping the command stops nothing: `harness eval status <eval-id>` follows the eval again.\n' +
        'Example: harness eval evals/smoke.jsonl --trials 3 --out reports/smoke.json --compare reports/base.json',
    )
    .action(async (suiteArg: string, evalIdArg: string | undefined, o: EvalFlags) => (await import('../actions/eval')).runEval(ctx, suiteArg, evalIdArg, o));
}
