/**
 * bench:cli — what a `harness` process costs before it does its work. Medians of BENCH_RUNS
 * (default 10) of the CPU time (user + sys, the process's own) and wall time of:
 *   - `node -e 0`, the bare Node start: the baseline, measured in the same run;
 *   - `harness --help`;
 *   - `harness status <session>` and `harness sessions` against a running embedded server and worker;
 *   - `harness approve <session> <call>` of a demo turn left waiting by the policy `ask` (a fresh
 *     one each time, made by a `harness run` that is not measured), waiting for the turn as a
 *     person's `approve` does;
 *   - a warm `harness run` of the README's demo (server and worker already up).
 * CPU time is the main figure: on a machine shared with other work it moves much less than
 * wall time. Each process also reports how many modules it loaded and which heavy packages
 * among them (those inside the CLI's bundle too), so a command that pulls in what it does not
 * use shows up by name.
 *
 * BENCH_CLI_ROOT measures another build of the harness (e.g. a checkout of an older commit).
 * The embedded server runs under a scratch HARNESS_HOME on free ports and is stopped at the end.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { projectRoot } from '../machine/paths';
import { freePort } from '../scripts/free-port';
import { fmt, median } from './stats';

const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const ROOT = path.resolve(process.env.BENCH_CLI_ROOT ?? projectRoot());
/** The targets, CPU ms: `--help` stays at most 160, the client commands at most 300. */
const TARGET_CPU_MS: Record<string, number> = { 'harness --help': 160, 'harness status': 300, 'harness sessions': 300, 'harness approve': 300 };
const DEMO = ['run', '--policy', 'auto', '--model', 'scripted:examples/demo.json', 'Write a short poem to poem.txt and read it back'];
/** The demo under `ask`: it waits for approval of its write_file call (exit 3). */
const ASKING = ['run', '--policy', 'ask', '--model', 'scripted:examples/demo.json', 'Write a short poem to poem.txt and read it back', '--json'];

/** Packages a command should load only when it uses them. */
const HEAVY = ['@temporalio/client', '@temporalio/worker', '@opentelemetry/exporter-trace-otlp-proto', '@electric-sql/pglite', '@modelcontextprotocol/sdk', 'dockerode', 'openai', 'zod', 'gpt-tokenizer', 'pg'];

/**
 * Preloaded (--require) into the measured process only: at exit it writes the process's own
 * CPU time and the modules it loaded. Passed as a flag rather than NODE_OPTIONS so a server or
 * worker the command starts is not measured.
 */
const PROBE = `
process.on('exit', () => {
  const u = process.cpuUsage();
  const files = Object.keys(require.cache);
  require('fs').writeFileSync(process.env.BENCH_CLI_PROBE_OUT, JSON.stringify({ cpuMs: (u.user + u.system) / 1000, files }));
});
`;

/** The packages in each file of the CLI's bundle (scripts/bundle-cli.ts), from the path rolldown notes above each module; read once. */
const inBundleFile = new Map<string, string[]>();

/** The packages a process loaded: from node_modules, or inside the bundle's files it loaded. */
function packagesOf(files: string[]): string[] {
  const pkgs = new Set<string>();
  for (const f of files) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f);
    if (m) pkgs.add(m[1]!);
    else if (f.includes(`${path.sep}cli${path.sep}bundle${path.sep}`)) {
      if (!inBundleFile.has(f)) inBundleFile.set(f, [...readFileSync(f, 'utf8').matchAll(/^\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//gm)].map((x) => x[1]!));
      for (const p of inBundleFile.get(f)!) pkgs.add(p);
    }
  }
  return [...pkgs];
}

interface Sample {
  cpuMs: number;
  wallMs: number;
  modules: number;
  packages: string[];
}

interface Case {
  name: string;
  /** The command; it may first prepare what it acts on (not measured). */
  args: () => string[] | Promise<string[]>;
}

/** Runs one process to its end; another exit than `expected` fails the benchmark (it would measure an error path). */
async function measure(scratch: string, env: NodeJS.ProcessEnv, args: string[], expected = 0): Promise<Sample & { stdout: string }> {
  const out = path.join(scratch, 'probe.json');
  rmSync(out, { force: true });
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--require', path.join(scratch, 'probe.js'), ...args], {
    cwd: ROOT,
    env: { ...env, BENCH_CLI_PROBE_OUT: out },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const wallMs = performance.now() - t0;
  if (code !== expected) throw new Error(`${args.join(' ')} exited ${code}:\n${stderr}`);
  const probe = JSON.parse(readFileSync(out, 'utf8')) as { cpuMs: number; files: string[] };
  return { cpuMs: probe.cpuMs, modules: probe.files.length, packages: packagesOf(probe.files), wallMs, stdout };
}

function scrubbedEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (/^(TEMPORAL_|HARNESS_|OTEL_)/.test(k)) delete env[k];
  return { ...env, ...extra };
}

async function main(): Promise<void> {
  const loadStart = os.loadavg();
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'bench-cli-'));
  writeFileSync(path.join(scratch, 'probe.js'), PROBE);
  const home = path.join(scratch, 'home');
  const port = await freePort();
  let uiPort = await freePort();
  while (uiPort === port) uiPort = await freePort();
  const env = scrubbedEnv({ HARNESS_HOME: home, HARNESS_EMBEDDED_PORT: String(port), HARNESS_UI_PORT: String(uiPort) });
  const cli = path.join(ROOT, 'bin', 'harness.js');
  try {
    // Cold: starts the embedded server and the background worker, which the rest reuse.
    const cold = await measure(scratch, env, [cli, ...DEMO, '--json']);
    const sessionId = (JSON.parse(cold.stdout) as { session_id: string }).session_id;
    console.log(`  cold run (starts server + worker): ${fmt(cold.wallMs, 0)} ms wall, CLI ${fmt(cold.cpuMs, 0)} ms CPU`);
    const cases: Case[] = [
      { name: 'node -e 0', args: () => ['-e', '0'] },
      { name: 'harness --help', args: () => [cli, '--help'] },
      { name: 'harness status', args: () => [cli, 'status', sessionId] },
      { name: 'harness sessions', args: () => [cli, 'sessions'] },
      {
        name: 'harness approve',
        args: async () => {
          const waiting = JSON.parse((await measure(scratch, env, [cli, ...ASKING], 3)).stdout) as { session_id: string; pending: { calls: { call_id: string }[] } };
          return [cli, 'approve', waiting.session_id, waiting.pending.calls[0]!.call_id];
        },
      },
      { name: 'harness run (warm)', args: () => [cli, ...DEMO] },
    ];
    const samples = new Map<string, Sample[]>(cases.map((c) => [c.name, []]));
    // Interleaved, so a change in the machine's load touches every case alike.
    for (let i = 0; i < RUNS; i++) for (const c of cases) samples.get(c.name)!.push(await measure(scratch, env, await c.args()));
    const base = median(samples.get(cases[0]!.name)!.map((s) => s.cpuMs));
    const load = os.loadavg();
    console.log(`bench:cli — ${ROOT}, medians of ${RUNS}, nproc ${os.availableParallelism()}, load ${load.map((l) => fmt(l)).join(' ')} (at start ${loadStart.map((l) => fmt(l)).join(' ')})`);
    const result: Record<string, { cpuMs: number; wallMs: number; modules: number; heavy: string[] }> = {};
    for (const c of cases) {
      const s = samples.get(c.name)!;
      const cpu = median(s.map((x) => x.cpuMs));
      const wall = median(s.map((x) => x.wallMs));
      const modules = median(s.map((x) => x.modules));
      const heavy = HEAVY.filter((h) => s.some((x) => x.packages.includes(h)));
      result[c.name] = { cpuMs: Number(fmt(cpu, 1)), wallMs: Number(fmt(wall, 1)), modules, heavy };
      const limit = TARGET_CPU_MS[c.name];
      const target = limit !== undefined ? ` (target ≤ ${limit} ms: ${cpu <= limit ? 'met' : 'missed'})` : '';
      console.log(
        `  ${c.name.padEnd(20)} CPU ${fmt(cpu, 0).padStart(5)} ms (${fmt(cpu / base, 1)}x node)${target}, wall ${fmt(wall, 0).padStart(5)} ms, ${modules} modules` +
          (heavy.length ? `; loads ${heavy.join(', ')}` : ''),
      );
    }
    console.log(JSON.stringify({ bench: 'cli', root: ROOT, runs: RUNS, nproc: os.availableParallelism(), loadavg: load.map((l) => Number(fmt(l))), result }));
  } finally {
    await measure(scratch, env, [cli, 'dev', '--stop']).catch((err: Error) => console.error(`could not stop the embedded server: ${err.message}`));
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
