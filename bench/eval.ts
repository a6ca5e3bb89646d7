/**
 * bench:eval — what running a suite as fan-out workflows costs and gains. A suite of 48 cases
 * (the model answers each after 2 s, as a real model takes that long; one check each) runs on a
 * real Temporal dev server and worker at concurrency 1 (the baseline, measured in the same run)
 * and 16: the wall time of each, the speedup (target: at least 12x at 16), the harness's own
 * wall-time overhead per case (at concurrency 1, less the model's 2 s), and the CPU each trial
 * costs: the worker's process (this one: worker and client) and the dev server's, together. Its
 * floor is the CPU of a bare child workflow per trial with one local activity and no harness
 * (eval-floor.ts), on a worker of its own beside the harness's.
 *
 * The trials at 16 and the floor's are measured in alternating rounds (BENCH_ROUNDS, default 5,
 * of BENCH_ROUND_CASES trials, default 96),
 * so both meet the same warmed code, heap and server; the harness's share is the median of the
 * rounds' differences. The model is `harness model serve` in a process of its own, as a real
 * endpoint is elsewhere; BENCH_MODEL=in-process runs it inside the worker instead (every case
 * with its own script, as tests do), where its work counts as the worker's.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { Client } from '@temporalio/client';
import { DEFAULT_LIMITS, type SessionConfig } from '../deterministic/session-config';
import { freezePolicy } from '../deterministic/policy';
import { parsePolicy } from '../deterministic/policy/schema';
import { followEval, startEval, type EvalOptions } from '../evals/runner/run';
import { parseSuite, type Suite } from '../evals/runner/suite';
import { runScript, withScratchHarness } from '../scripts/scratch';
import { fmt, median } from './stats';
import { ownCpuMs, processCpuMs } from './cpu';
import { historyCounts, shareOf, sumCounts, type HistoryCounts } from './history-counts';
import { trialSessionId } from '../workflows/eval/eval';
import { startFloor, type FloorRun } from './eval-floor';
import { startModelProcess, type ModelProcess } from './model-process';

const CASES = Number(process.env.BENCH_CASES ?? 48);
const DELAY_MS = Number(process.env.BENCH_DELAY_MS ?? 2000);
const TOP = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
// A round is long enough (six waves of 16 model calls) that the server's own periodic work, which
// lands in one side's window or the other's, is a small part of it.
const ROUND_CASES = Number(process.env.BENCH_ROUND_CASES ?? 96);
const IN_PROCESS = process.env.BENCH_MODEL === 'in-process';
const TARGET = 12;
const TARGET_SHARE_MS = 10;

/** The suite: `cases` cases, each its own script when the model runs in the worker. */
function suiteOf(cases: number, file: string): Suite {
  const text = Array.from({ length: cases }, (_, i) =>
    JSON.stringify({
      id: `case-${i}`,
      input: `Say ${i}.`,
      ...(IN_PROCESS ? { model_script: { steps: [{ fault: { delay_ms: DELAY_MS }, content: `answer ${i}` }] } } : {}),
      checks: [{ type: 'contains', value: 'answer' }],
    }),
  ).join('\n');
  return parseSuite(text, file);
}

function optionsFor(model: ModelProcess | undefined, concurrency: number): EvalOptions {
  const config: SessionConfig = {
    model: model ? { provider: 'openai', model: 'scripted', baseUrl: model.url } : { provider: 'scripted', model: 'scripted', script: { steps: [] } },
    systemPrompt: 'bench',
    limits: DEFAULT_LIMITS,
    policy: freezePolicy(parsePolicy({ mode: 'ask' })),
  };
  return { concurrency, trials: 1, config, model: 'scripted', scriptedPerCase: IN_PROCESS };
}

/** One run of the harness's trials (ms of CPU a trial, the wall time, the eval's id, the progress queries its follower asked). */
interface HarnessRun extends FloorRun {
  asks: number;
}

async function main(): Promise<void> {
  const loadStart = os.loadavg();
  const suite = suiteOf(CASES, 'bench.jsonl');
  const roundSuite = suiteOf(ROUND_CASES, 'round.jsonl');
  // Every trial's session plays this one step from the start: the model answers after DELAY_MS.
  const model = IN_PROCESS ? undefined : await startModelProcess({ steps: [{ fault: { delay_ms: DELAY_MS }, content: 'answer' }] });
  let base: HarnessRun | undefined;
  const rounds: { harness: HarnessRun; floor: FloorRun; tasks?: { eval: number; floor: number } }[] = [];
  let perTrial: HistoryCounts | undefined;
  try {
    await withScratchHarness('bench-eval', async ({ client, taskQueue, serverPid, address, declarations }) => {
      if (model) declarations.add({ modelEndpoints: [model.url] });
      const serverCpu = () => (serverPid === undefined ? 0 : processCpuMs(serverPid));
      // The follower as `harness eval` follows; its progress queries counted (each costs CPU in the worker and the server).
      let asks = 0;
      const follower = new Client({ connection: client.connection, namespace: client.options.namespace, interceptors: { workflow: [{ query: (input, next) => (asks++, next(input)) }] } });
      const harness = async (s: Suite, concurrency: number): Promise<HarnessRun> => {
        const [w0, s0, t0, a0] = [ownCpuMs(), serverCpu(), performance.now(), asks];
        const evalId = await startEval(client, taskQueue, s, optionsFor(model, concurrency));
        const report = await followEval(follower, evalId, () => undefined);
        const n = s.cases.length;
        const run = { worker: (ownCpuMs() - w0) / n, server: (serverCpu() - s0) / n, wallMs: performance.now() - t0, workflowId: evalId, asks: asks - a0 };
        if (report.totals.passed_trials !== n) throw new Error(`concurrency ${concurrency}: ${report.totals.passed_trials} of ${n} passed: ${JSON.stringify(report.totals.failure_reasons)}`);
        return run;
      };
      const floor = await startFloor(client, address, serverCpu, DELAY_MS);
      try {
        // A warm-up eval of a few cases: code paths, the embedded store, the first model call.
        await harness(suiteOf(4, 'warm.jsonl'), 4);
        base = await harness(suite, 1);
        console.log(`  concurrency  1: ${fmt(base.wallMs / 1000)} s for ${CASES} cases; CPU a trial: worker ${fmt(base.worker, 1)} + server ${fmt(base.server, 1)} ms`);
        for (let r = 1; r <= ROUNDS; r++) {
          const h = await harness(roundSuite, TOP);
          const f = await floor.round(ROUND_CASES, TOP);
          rounds.push({ harness: h, floor: f });
          perTrial ??= await trialCounts(client, h.workflowId, ROUND_CASES);
          const [ht, ft] = [h.worker + h.server, f.worker + f.server];
          // Read after both windows: how many workflow tasks the eval and the floor's parent took a
          // trial (by how many child starts and ends shared a task), which moves either side's CPU.
          const [et, pt] = await Promise.all([h, f].map(async (x) => (await historyCounts(client, x.workflowId)).workflowTasks / ROUND_CASES));
          rounds[rounds.length - 1]!.tasks = { eval: Number(fmt(et!, 2)), floor: Number(fmt(pt!, 2)) };
          console.log(
            `  round ${r} at ${TOP}: harness ${fmt(h.wallMs / 1000)} s, CPU a trial ${fmt(h.worker, 1)} + ${fmt(h.server, 1)} = ${fmt(ht, 1)} ms; floor ${fmt(f.worker, 1)} + ${fmt(f.server, 1)} = ${fmt(ft, 1)} ms; the harness adds ${fmt(ht - ft, 1)} ms (${h.asks} progress queries; workflow tasks a trial of the eval ${fmt(et!, 2)}, of the floor's parent ${fmt(pt!, 2)})`,
          );
        }
      } finally {
        await floor.close();
      }
    });
  } finally {
    await model?.stop();
  }
  const b = base!;
  // Per case: the baseline runs CASES cases, a round ROUND_CASES.
  const speedup = b.wallMs / CASES / (median(rounds.map((r) => r.harness.wallMs)) / ROUND_CASES);
  const overhead = b.wallMs / CASES - DELAY_MS;
  const total = (r: FloorRun) => r.worker + r.server;
  const harnessCpu = median(rounds.map((r) => total(r.harness)));
  const floorCpu = median(rounds.map((r) => total(r.floor)));
  const share = median(rounds.map((r) => total(r.harness) - total(r.floor)));
  const load = os.loadavg();
  console.log(`bench:eval — ${CASES} cases at 1, ${ROUND_CASES} a round at ${TOP}, the model (${IN_PROCESS ? 'in the worker' : 'its own process'}) answering after ${DELAY_MS} ms, ${ROUNDS} rounds, nproc ${os.availableParallelism()}, load ${load.map((l) => fmt(l)).join(' ')} (at start ${loadStart.map((l) => fmt(l)).join(' ')})`);
  console.log(`  speedup at ${TOP}: ${fmt(speedup)}x (target ≥ ${TARGET}x: ${speedup >= TARGET ? 'met' : 'missed'}); harness overhead ${fmt(overhead)} ms a case at concurrency 1`);
  console.log(`  CPU a trial at ${TOP} (medians of the rounds): harness ${fmt(harnessCpu, 1)} ms, floor ${fmt(floorCpu, 1)} ms (a bare child workflow with one local activity, no harness)`);
  console.log(`  the harness adds ${fmt(share, 1)} ms a trial above the floor (median of the rounds; target ≤ ${TARGET_SHARE_MS} ms: ${share <= TARGET_SHARE_MS ? 'met' : 'missed'})`);
  const t = perTrial!;
  console.log(
    `  a trial in history (with its 1/${ROUND_CASES} of the eval's): ${t.runs} workflow run(s) of its own, ${fmt(t.workflowTasks, 1)} workflow tasks, ${fmt(t.activityTasks, 1)} activity tasks, ${fmt(t.localActivities, 1)} local activities, ${fmt(t.events, 1)} events, ${fmt(t.bytes / 1024, 1)} KiB`,
  );
  const ms = (r: FloorRun) => ({ worker: Number(fmt(r.worker, 1)), server: Number(fmt(r.server, 1)) });
  console.log(JSON.stringify({ bench: 'eval', cases: CASES, roundCases: ROUND_CASES, delayMs: DELAY_MS, model: IN_PROCESS ? 'in-process' : 'process', nproc: os.availableParallelism(), loadavg: load.map((l) => Number(fmt(l))), wallMs: { 1: Number(fmt(b.wallMs)), [TOP]: rounds.map((r) => Number(fmt(r.harness.wallMs))) }, speedup: Number(fmt(speedup)), overheadMsPerCase: Number(fmt(overhead)), cpuMsPerTrial: { 1: ms(b), [TOP]: rounds.map((r) => ms(r.harness)) }, floorCpuMsPerTrial: rounds.map((r) => ms(r.floor)), workflowTasksPerTrial: rounds.map((r) => r.tasks), shareMs: Number(fmt(share, 1)), trialHistory: perTrial, targetSpeedup: TARGET, targetShareMs: TARGET_SHARE_MS }));
}

/** What one trial cost the server, from its histories: its turn's, its own workflow's (an eval from before the eval ran trials itself) and its share of the eval's. */
async function trialCounts(client: Client, evalId: string, cases: number): Promise<HistoryCounts> {
  const trial = trialSessionId(evalId, 'case-0', 1);
  return sumCounts([...(await Promise.all([historyCounts(client, trial), historyCounts(client, `${trial}/turn-1`)])), shareOf(await historyCounts(client, evalId), cases)]);
}

runScript(main);
