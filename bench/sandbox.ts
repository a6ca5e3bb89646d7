/**
 * bench:sandbox — what the Docker sandbox costs per command. Measures, against the real
 * Docker Engine and in one run: run_shell("true") through the tool executor on a warm
 * container, through the container's shell session (the default) and through a Docker exec per
 * command (the way before sessions, the baseline); the sandbox's own exec() without the tool
 * layer; container cold start (create + start + first command done); and a host
 * child_process exec of the same command.
 * Targets: warm run_shell median <= 10 ms, cold start median <= 200 ms.
 */
import { exec as execCb } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import Docker from 'dockerode';
import { DockerSandbox } from '../activities/sandbox/docker-sandbox';
import { removeOrphans } from '../activities/sandbox/containers';
import { type Sandbox } from '../activities/sandbox/sandbox';
import { createToolExecutor } from '../activities/tools/executor';
import { fmt, median, percentile } from './stats';

const WARM_RUNS = Number(process.env.BENCH_RUNS ?? 100);
const COLD_RUNS = Number(process.env.BENCH_COLD_RUNS ?? 10);
const TARGET_WARM_MS = 10;
const TARGET_COLD_MS = 200;
const execAsync = promisify(execCb);

async function timed(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

function row(name: string, xs: number[], base?: number): string {
  const ratio = base ? `${fmt(median(xs) / base, 1)}x` : '1.0x';
  return `${name.padEnd(40)} ${fmt(median(xs)).padStart(9)} ${fmt(percentile(xs, 95)).padStart(9)} ${ratio.padStart(9)}`;
}

async function main(): Promise<void> {
  const docker = new Docker();
  const info = await docker.info();
  const home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'bench-sandbox-')));
  try {
    // Baseline: the same command on the host, through a shell like the sandbox uses.
    await timed(5, () => execAsync('true'));
    const host = await timed(WARM_RUNS, () => execAsync('true'));

    // Warm: one container per path, the full tool path (validation, executor, sandbox).
    const warmOf = async (sessions: boolean) => {
      const sandboxes = new Map<string, Sandbox>();
      const tools = createToolExecutor({
        home,
        sandboxes: (id) => sandboxes.get(id) ?? sandboxes.set(id, new DockerSandbox({ home, sessionId: id, sessions })).get(id)!,
      });
      const warmId = `bench-warm-${randomUUID().slice(0, 8)}`;
      const call = async () => {
        const r = await tools.execute({ sessionId: warmId, name: 'run_shell', args: { command: 'true' } });
        if (!r.ok) throw new Error(`run_shell failed: ${JSON.stringify(r)}`);
      };
      await timed(5, call);
      const sb = sandboxes.get(warmId)!;
      return { tool: await timed(WARM_RUNS, call), exec: await timed(WARM_RUNS, () => sb.exec('true', { timeoutMs: 10_000 })) };
    };
    const perExec = await warmOf(false);
    const warmSession = await warmOf(true);
    const warm = warmSession.tool;

    // Cold: a new session each time; create, start and the first command, then remove.
    const cold: number[] = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      const sb = new DockerSandbox({ home, sessionId: `bench-cold-${randomUUID().slice(0, 8)}` });
      const t0 = performance.now();
      const r = await sb.exec('true', { timeoutMs: 10_000 });
      cold.push(performance.now() - t0);
      if (r.exitCode !== 0) throw new Error(`cold start command failed: ${JSON.stringify(r)}`);
      await sb.remove();
    }

    const base = median(host);
    console.log(`Docker ${info.ServerVersion}, storage ${info.Driver}, cgroup v${info.CgroupVersion ?? '?'}, ${os.cpus().length} CPUs, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    console.log(`runs: warm/host ${WARM_RUNS}, cold ${COLD_RUNS}\n`);
    console.log(`${'measure (ms)'.padEnd(40)} ${'median'.padStart(9)} ${'p95'.padStart(9)} ${'vs host'.padStart(9)}`);
    console.log(row('host child_process exec "true"', host));
    console.log(row('run_shell("true"), Docker exec each', perExec.tool, base));
    console.log(row('run_shell("true"), shell session', warm, base));
    console.log(row('  sandbox exec() alone, Docker exec', perExec.exec, base));
    console.log(row('  sandbox exec() alone, shell session', warmSession.exec, base));
    console.log(row('cold start (create to first cmd)', cold, base));
    console.log(`\nshell session vs Docker exec each (run_shell): ${fmt(median(perExec.tool) / median(warm), 1)}x faster`);
    const warmOk = median(warm) <= TARGET_WARM_MS;
    const coldOk = median(cold) <= TARGET_COLD_MS;
    console.log(`\nwarm target <= ${TARGET_WARM_MS} ms: ${warmOk ? 'met' : 'MISSED'}; cold target <= ${TARGET_COLD_MS} ms: ${coldOk ? 'met' : 'MISSED'}`);
    if (!warmOk || !coldOk) process.exitCode = 1;
  } finally {
    await removeOrphans(docker, [], { home }).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
