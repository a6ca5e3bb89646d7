/**
 * npm run fuzz:policy -- [--count N] [--seed N] [--timeout S] [--examples N] [--minimize] [--json FILE]
 *
 * A longer differential run of the default policy than the test's: generates N commands, runs
 * those the policy allows in the trace image under strace, and prints the counts, every class of
 * disagreement (grouped by what was missed, with examples, optionally minimized) and the time.
 * Exits 1 when the policy allowed anything that did more than it claimed.
 */
import * as fs from 'node:fs';
import { formatDisagreement, signature, type Disagreement } from './judge';
import { minimize } from './minimize';
import { runDifferential } from './run';
import { Tracer } from './tracer';

interface Args {
  count: number;
  seed: number;
  timeout: number;
  examples: number;
  minimize: boolean;
  json?: string;
}

const HELP = `npm run fuzz:policy -- [options]

Generates commands, runs every one the default policy allows in the sandbox image under strace,
and reports any that ran a program the policy did not see or wrote a file. Exits 1 on any.

  --count N      commands to generate (default 5000)
  --seed N       generator seed (default: from the clock; printed, so a run can be repeated)
  --timeout S    seconds a traced command may run (default 5)
  --examples N   examples shown per class of disagreement (default 2)
  --minimize     shrink each example to a shortest command that still disagrees
  --json FILE    also write the counts and every disagreement as JSON
  --help         this text`;

function parseArgs(argv: string[]): Args | 'help' {
  const args: Args = { count: 5_000, seed: Date.now() % 1_000_000, timeout: 5, examples: 2, minimize: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--help' || a === '-h') return 'help';
    if (a === '--count') args.count = Number(value());
    else if (a === '--seed') args.seed = Number(value());
    else if (a === '--timeout') args.timeout = Number(value());
    else if (a === '--examples') args.examples = Number(value());
    else if (a === '--json') args.json = value();
    else if (a === '--minimize') args.minimize = true;
    else throw new Error(`unknown argument ${a} (see npm run fuzz:policy -- --help)`);
  }
  for (const k of ['count', 'seed', 'timeout', 'examples'] as const) {
    if (!Number.isFinite(args[k]) || args[k] < 0) throw new Error(`--${k} must be a number`);
  }
  return args;
}

function groups(list: Disagreement[]): [string, Disagreement[]][] {
  const by = new Map<string, Disagreement[]>();
  for (const d of list) by.set(signature(d), [...(by.get(signature(d)) ?? []), d]);
  // Shortest examples first: they are the easiest to read.
  for (const ds of by.values()) ds.sort((a, b) => a.command.length - b.command.length);
  return [...by].sort((a, b) => b[1].length - a[1].length);
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args === 'help') {
    console.log(HELP);
    return 0;
  }
  console.log(`fuzz:policy — seed ${args.seed}, ${args.count} commands, ${args.timeout} s per command`);
  const tracer = await Tracer.start({ timeoutSeconds: args.timeout });
  try {
    const t0 = Date.now();
    const s = await runDifferential({
      seed: args.seed,
      count: args.count,
      tracer,
      onProgress: (done, total, bad) => process.stderr.write(`\r  traced ${done}/${total}, ${bad} disagreements`),
    });
    process.stderr.write('\n');
    const pct = (n: number) => `${((100 * n) / Math.max(1, s.generated)).toFixed(1)} %`;
    console.log(`generated     ${s.generated}`);
    console.log(`allowed       ${s.allowed} (${pct(s.allowed)}), of which ${s.timedOut} hit the time limit`);
    console.log(`asked         ${s.asked} (${pct(s.asked)})`);
    console.log(`denied        ${s.denied} (${pct(s.denied)})`);
    console.log(`disagreements ${s.disagreements.length}`);
    for (const [key, ds] of groups(s.disagreements)) {
      console.log(`\n== ${ds.length} × ${key}`);
      for (const d of ds.slice(0, args.examples)) {
        console.log(formatDisagreement(d).replace(/^/gm, '  '));
        if (args.minimize) console.log(`  minimized: ${JSON.stringify((await minimize(tracer, d)).command)}`);
      }
    }
    console.log(
      `\ntime ${((Date.now() - t0) / 1000).toFixed(1)} s: deciding ${(s.decideMs / 1000).toFixed(1)} s, tracing ${(s.traceMs / 1000).toFixed(1)} s` +
        ` (${s.perTracedMs.toFixed(1)} ms per allowed command)`,
    );
    if (args.json) fs.writeFileSync(args.json, JSON.stringify({ args, ...s }, null, 2));
    return s.disagreements.length ? 1 : 0;
  } finally {
    await tracer.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    // A bad argument or a missing image is a one-line error, not a stack trace.
    console.error(`fuzz:policy: ${(err as Error)?.message ?? String(err)}`);
    process.exit(2);
  },
);
