/**
 * bench:eval — what running a suite as fan-out workflows costs and gains. A suite of 48 cases
 * (the scripted model answers each after 2 s, as a real model takes that long; one check each)
 * runs on a real Temporal dev server and worker at concurrency 1 (the baseline, measured in the
 * same run) and 16: the wall time of each, the speedup (target: at least 12x at 16), the
 * harness's own wall-time overhead per case (at concurrency 1, less the model's 2 s), and the
 * CPU each trial costs the harness (target: at most 30 ms): the worker's process (this one:
 * worker and client) and the dev server's, together; and, as its floor in the same run, the CPU
 * of a bare child workflow per trial with one local activity and no harness (eval-floor.ts).
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { DEFAULT_LIMITS, type SessionConfig } from '../deterministic/session-config';
import { freezePolicy } from '../deterministic/policy';
import { parsePolicy } from '../deterministic/policy/schema';
import { followEval, startEval } from '../evals/runner/run';
import { parseSuite } from '../evals/runner/suite';
import { runScript, withScratchHarness } from '../scripts/scratch';
import { fmt } from './stats';
import { ownCpuMs, processCpuMs } from './cpu';
import { historyCounts, shareOf, sumCounts, type HistoryCounts } from './history-counts';
import { trialSessionId } from '../workflows/eval/eval';
import { floorCpu, type FloorRun } from './eval-floor';

const CASES = Number(process.env.BENCH_CASES ?? 48);
const DELAY_MS = Number(process.env.BENCH_DELAY_MS ?? 2000);
const LEVELS = (process.env.BENCH_CONCURRENCY ?? '1,16').split(',').map(Number);
const TARGET = 12;
const TARGET_CPU_MS = 30;

function suiteText(): string {
  return Array.from({ length: CASES }, (_, i) =>
    JSON.stringify({
      id: `case-${i}`,
      input: `Say ${i}.`,
      model_script: { steps: [{ fault: { delay_ms: DELAY_MS }, content: `answer ${i}` }] },
      checks: [{ type: 'contains', value: `answer ${i}` }],
    }),
  ).join('\n');
}

const config: SessionConfig = {
  model: { provider: 'scripted', model: 'scripted', script: { steps: [] } },
  systemPrompt: 'bench',
  limits: DEFAULT_LIMITS,
  policy: freezePolicy(parsePolicy({ mode: 'ask' })),
};

async function main(): Promise<void> {
  const loadStart = os.loadavg();
  const suite = parseSuite(suiteText(), 'bench.jsonl');
  const wall: Record<number, number> = {};
  const cpu: Record<number, { worker: number; server: number }> = {};
  let perTrial: HistoryCounts | undefined;
  let floor: FloorRun | undefined;
  await withScratchHarness('bench-eval', async ({ client, taskQueue, serverPid, address }) => {
    const serverCpu = () => (serverPid === undefined ? 0 : processCpuMs(serverPid));
    // A warm-up eval of a few cases: code paths, the embedded store, the first sandbox-free turn.
    const warm = parseSuite(suiteText().split('\n').slice(0, 4).join('\n'), 'warm.jsonl');
    await followEval(client, await startEval(client, taskQueue, warm, { concurrency: 4, trials: 1, config, model: 'scripted', scriptedPerCase: true }), () => undefined);
    for (const c of LEVELS) {
      const t0 = performance.now();
      const [w0, s0] = [ownCpuMs(), serverCpu()];
      const id = await startEval(client, taskQueue, suite, { concurrency: c, trials: 1, config, model: 'scripted', scriptedPerCase: true });
      const report = await followEval(client, id, () => undefined);
      wall[c] = performance.now() - t0;
      cpu[c] = { worker: (ownCpuMs() - w0) / CASES, server: (serverCpu() - s0) / CASES };
      if (report.totals.passed_trials !== CASES) throw new Error(`concurrency ${c}: ${report.totals.passed_trials} of ${CASES} passed: ${JSON.stringify(report.totals.failure_reasons)}`);
      // What one trial cost the server, from its histories: its turn's, its own workflow's (an
      // eval from before the eval ran trials itself) and its share of the eval's.
      const trial = trialSessionId(id, 'case-0', 1);
      perTrial ??= sumCounts([
        ...(await Promise.all([historyCounts(client, trial), historyCounts(client, `${trial}/turn-1`)])),
        shareOf(await historyCounts(client, id), CASES),
      ]);
      console.log(`  concurrency ${String(c).padStart(2)}: ${fmt(wall[c]! / 1000)} s for ${CASES} cases (${fmt(wall[c]! / CASES)} ms a case); CPU a trial: worker ${fmt(cpu[c].worker, 1)} ms + server ${fmt(cpu[c].server, 1)} ms`);
    }
    floor = await floorCpu(client, address, serverCpu, { cases: CASES, concurrency: LEVELS.at(-1)!, delayMs: DELAY_MS });
  });
  const base = wall[LEVELS[0]!]!;
  const top = LEVELS.at(-1)!;
  const speedup = base / wall[top]!;
  const overhead = base / CASES - DELAY_MS;
  const cpuTop = cpu[top]!.worker + cpu[top]!.server;
  const load = os.loadavg();
  console.log(`bench:eval — ${CASES} cases, scripted model answering after ${DELAY_MS} ms, nproc ${os.availableParallelism()}, load ${load.map((l) => fmt(l)).join(' ')} (at start ${loadStart.map((l) => fmt(l)).join(' ')})`);
  console.log(`  speedup at ${top}: ${fmt(speedup)}x (target ≥ ${TARGET}x: ${speedup >= TARGET ? 'met' : 'missed'}); harness overhead ${fmt(overhead)} ms a case at concurrency ${LEVELS[0]}`);
  console.log(`  harness CPU a trial at ${top}: ${fmt(cpuTop, 1)} ms, worker and server (target ≤ ${TARGET_CPU_MS} ms: ${cpuTop <= TARGET_CPU_MS ? 'met' : 'missed'})`);
  const f = floor!;
  const floorTotal = f.worker + f.server;
  console.log(
    `  floor at ${top}, a bare child workflow with one local activity a trial (no harness): worker ${fmt(f.worker, 1)} + server ${fmt(f.server, 1)} = ${fmt(floorTotal, 1)} ms; the harness adds ${fmt(cpuTop - floorTotal, 1)} ms a trial (${fmt(cpuTop / floorTotal)}x the floor)`,
  );
  const t = perTrial!;
  console.log(
    `  a trial in history (with its 1/${CASES} of the eval's): ${t.runs} workflow run(s) of its own, ${fmt(t.workflowTasks, 1)} workflow tasks, ${fmt(t.activityTasks, 1)} activity tasks, ${fmt(t.localActivities, 1)} local activities, ${fmt(t.events, 1)} events, ${fmt(t.bytes / 1024, 1)} KiB`,
  );
  console.log(JSON.stringify({ bench: 'eval', cases: CASES, delayMs: DELAY_MS, nproc: os.availableParallelism(), loadavg: load.map((l) => Number(fmt(l))), wallMs: Object.fromEntries(Object.entries(wall).map(([k, v]) => [k, Number(fmt(v))])), speedup: Number(fmt(speedup)), overheadMsPerCase: Number(fmt(overhead)), cpuMsPerTrial: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, { worker: Number(fmt(v.worker, 1)), server: Number(fmt(v.server, 1)) }])), trialHistory: perTrial, floorCpuMsPerTrial: { worker: Number(fmt(f.worker, 1)), server: Number(fmt(f.server, 1)) }, targetSpeedup: TARGET, targetCpuMs: TARGET_CPU_MS }));
}

runScript(main);
