/**
 * bench:eval — what running a suite as fan-out workflows costs and gains. A suite of 100 cases
 * (the scripted model answers each after 200 ms; one check each) runs on a real Temporal dev
 * server and worker at concurrency 1 (the baseline, measured in the same run) and 16: the wall
 * time of each, the speedup (target: at least 10x at 16), and the harness's own overhead per
 * case (wall time at concurrency 1 per case, less the 200 ms the model takes).
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { DEFAULT_LIMITS, type SessionConfig } from '../common/session';
import { freezePolicy } from '../common/policy';
import { parsePolicy } from '../common/policy/schema';
import { followEval, startEval } from '../evals/runner/run';
import { parseSuite } from '../evals/runner/suite';
import { runScript, withScratchHarness } from '../scripts/scratch';
import { fmt } from './stats';

const CASES = Number(process.env.BENCH_CASES ?? 100);
const DELAY_MS = Number(process.env.BENCH_DELAY_MS ?? 200);
const LEVELS = (process.env.BENCH_CONCURRENCY ?? '1,16').split(',').map(Number);
const TARGET = 10;

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
  await withScratchHarness('bench-eval', async ({ client, taskQueue }) => {
    // A warm-up eval of a few cases: code paths, the embedded store, the first sandbox-free turn.
    const warm = parseSuite(suiteText().split('\n').slice(0, 4).join('\n'), 'warm.jsonl');
    await followEval(client, await startEval(client, taskQueue, warm, { concurrency: 4, trials: 1, config, model: 'scripted', scriptedPerCase: true }), () => undefined);
    for (const c of LEVELS) {
      const t0 = performance.now();
      const id = await startEval(client, taskQueue, suite, { concurrency: c, trials: 1, config, model: 'scripted', scriptedPerCase: true });
      const report = await followEval(client, id, () => undefined);
      wall[c] = performance.now() - t0;
      if (report.totals.passed_trials !== CASES) throw new Error(`concurrency ${c}: ${report.totals.passed_trials} of ${CASES} passed: ${JSON.stringify(report.totals.failure_reasons)}`);
      console.log(`  concurrency ${String(c).padStart(2)}: ${fmt(wall[c]! / 1000)} s for ${CASES} cases (${fmt(wall[c]! / CASES)} ms a case)`);
    }
  });
  const base = wall[LEVELS[0]!]!;
  const top = LEVELS.at(-1)!;
  const speedup = base / wall[top]!;
  const overhead = base / CASES - DELAY_MS;
  const load = os.loadavg();
  console.log(`bench:eval — ${CASES} cases, scripted model answering after ${DELAY_MS} ms, nproc ${os.availableParallelism()}, load ${load.map((l) => fmt(l)).join(' ')} (at start ${loadStart.map((l) => fmt(l)).join(' ')})`);
  console.log(`  speedup at ${top}: ${fmt(speedup)}x (target ≥ ${TARGET}x: ${speedup >= TARGET ? 'met' : 'missed'}); harness overhead ${fmt(overhead)} ms a case at concurrency ${LEVELS[0]}`);
  console.log(JSON.stringify({ bench: 'eval', cases: CASES, delayMs: DELAY_MS, nproc: os.availableParallelism(), loadavg: load.map((l) => Number(fmt(l))), wallMs: Object.fromEntries(Object.entries(wall).map(([k, v]) => [k, Number(fmt(v))])), speedup: Number(fmt(speedup)), overheadMsPerCase: Number(fmt(overhead)), targetSpeedup: TARGET }));
}

runScript(main);
