/**
 * bench:policy — what judging a run_shell command costs inside the workflow, where a workflow
 * task over 2 s fails (target: every case under 50 ms). decide() under the default policy as a
 * session keeps it (version 3, RE2 patterns) for a short everyday command (the baseline, measured in the same run) and for
 * pathological commands of the longest accepted length (MAX_SHELL_COMMAND): backtracking bait
 * for regular expressions, deep nesting, thousands of pipes, lists, arguments, here-documents.
 * Each is also timed at half the length: a ratio near 2 says the cost grows linearly (4 would
 * be quadratic). The adversarial cases of the security review come too: chains of every wrapper
 * (`nice nice … ls` once overflowed the stack of every worker), long `env -u` lists, `flock` and
 * `timeout` chains, wrappers mixed, sed scripts of labels.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { MAX_SHELL_COMMAND } from '../deterministic/builtin-tools';
import { decide, freezePolicy } from '../deterministic/policy/decide';
import { parsePolicy } from '../deterministic/policy/schema';
import { fmt, median } from './stats';
import { runScript } from '../scripts/scratch';

const POLICY = freezePolicy(parsePolicy(undefined));
// One link of a chain of each wrapper the analysis follows (with the options it reads).
const WRAPPER_CHAINS = [
  'nice ', 'nohup ', 'env ', 'env -u X ', 'exec ', 'command ', 'builtin ', 'time ', 'timeout 1 ', 'xargs ', 'stdbuf -oL ',
  'ionice -c 3 ', 'setsid ', 'flock f ', 'taskset 1 ', 'chroot . ', 'sudo ', 'doas ', 'strace ', 'ltrace ', 'unbuffer ', 'busybox ',
  'watch ', 'sh -c ', 'find . -exec ', 'eval ',
];
const SHORT = 'cat README.md | grep foo | wc -l';
/** The worst median the analysis may take on any adversarial input of the longest accepted length. */
const TARGET_MS = 50;
const SHORT_RUNS = Number(process.env.BENCH_RUNS ?? 2_000);
const LONG_RUNS = Math.max(5, Math.round(SHORT_RUNS / 100));

/** `head`, then `unit` repeated, then `tail`, padded with spaces to exactly `length`. */
function fill(length: number, head: string, unit: string, tail = ''): string {
  const room = length - head.length - tail.length;
  const body = unit.repeat(Math.floor(room / unit.length));
  return head + body + ' '.repeat(room - body.length) + tail;
}

function nested(length: number, open: string, close: string, head = 'echo '): string {
  const depth = Math.floor((length - head.length - 1) / (open.length + close.length));
  return fill(length, head, ' ', `${open.repeat(depth)}x${close.repeat(depth)}`);
}

/** Pathological commands of a given length. */
const CASES: [string, (length: number) => string][] = [
  ['rm -rrr…r= (regex backtracking bait)', (n) => fill(n, 'rm -', 'r', '=')],
  ['sed -iii…i\\n', (n) => fill(n, 'sed -', 'i', '\n')],
  ['$($($(…))) nesting', (n) => nested(n, '$(', ')')],
  ['"$("$(…)")" nesting', (n) => nested(n, '"$(', ')"')],
  ['<(<(…)) nesting', (n) => nested(n, '<(', ')', 'cat ')],
  ['`echo `echo … backticks', (n) => fill(n, '', '`echo ')],
  ['ls | cat | … (5,000 pipes)', (n) => fill(n, 'ls', ' | cat')],
  ['ls; ls; … (8,000 commands)', (n) => fill(n, 'ls', '; ls')],
  ['ls a a a … (16,000 arguments)', (n) => fill(n, 'ls', ' a')],
  ['cat <<EOF <<EOF … here-documents', (n) => fill(n, 'cat', ' <<EOF')],
  ['echo {{{… braces', (n) => fill(n, 'echo ', '{')],
  ...WRAPPER_CHAINS.map((unit): [string, (n: number) => string] => [`${unit.trim()} … chain`, (n) => fill(n, '', unit, 'ls')]),
  ['env -u X -u X … (one long env)', (n) => fill(n, 'env', ' -u X', ' ls')],
  ['sudo nice env timeout … mixed', (n) => fill(n, '', 'sudo -u x nice -n 1 env A=1 timeout 5 flock f ', 'ls')],
  ["sed ':a;ba;:a;…' labels", (n) => fill(n, "sed -n '", ':a;ba;', "p' f")],
  ['ls -l -l -l … (options)', (n) => fill(n, 'ls', ' -l')],
  ['find . ( ( ( … ) ) )', (n) => nested(n, ' \\( ', ' \\)', 'find . ')],
];

/** Per-call times in ms; the first runs warm the JIT and the pattern caches. */
function time(command: string, runs: number): number[] {
  const call = { tool: 'run_shell', risk: 'dangerous' as const, args: { command } };
  for (let i = 0; i < Math.min(runs, 3); i++) decide(POLICY, call);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    decide(POLICY, call);
    samples.push(performance.now() - t0);
  }
  return samples;
}

async function main(): Promise<void> {
  const base = median(time(SHORT, SHORT_RUNS));
  console.log(`bench:policy — decide() under the frozen default policy, ${os.cpus().length} cores; commands of ${MAX_SHELL_COMMAND} characters`);
  console.log(`  baseline ${JSON.stringify(SHORT)}: median ${fmt(base, 3)} ms (${SHORT_RUNS} runs)`);
  let worst = 0;
  let worstRatio = 0;
  for (const [name, make] of CASES) {
    const command = make(MAX_SHELL_COMMAND);
    const m = median(time(command, LONG_RUNS));
    const half = median(time(make(MAX_SHELL_COMMAND / 2), LONG_RUNS));
    worst = Math.max(worst, m);
    // The ratio is noise for cases that take well under a millisecond.
    if (m >= 1) worstRatio = Math.max(worstRatio, m / half);
    const d = decide(POLICY, { tool: 'run_shell', risk: 'dangerous', args: { command } });
    console.log(
      `  ${name.padEnd(38)} median ${fmt(m, 1).padStart(6)} ms  ${fmt(m / base, 0).padStart(5)}x baseline` +
        `  full/half length ${fmt(m / half, 1)}  → ${d.decision} (${d.rule})`,
    );
  }
  console.log(`  worst median ${fmt(worst, 1)} ms (target < ${TARGET_MS} ms: ${worst < TARGET_MS ? 'met' : 'missed'}; a workflow task may take 2,000 ms), ${LONG_RUNS} runs each`);
  console.log(`  worst full/half length ratio ${fmt(worstRatio, 1)} among cases of 1 ms or more (2 is linear, 4 quadratic)`);
}

runScript(main);
