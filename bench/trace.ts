/**
 * bench:trace — what `harness trace` costs on a long turn. A session whose one turn runs 1,000
 * steps (scripted model with no delay, get_current_time each step with a varying argument; the
 * turn continues as new several times) runs on a real Temporal dev server; then, several times,
 * the trace of the whole session is built with the CLI's own loadTrace() (every run's history
 * fetched and decoded, the span list built) and rendered as JSON lines (target: under 1 s).
 * Baseline in the same run, alternated with it: fetching the histories of every run of the
 * session and the turn (workflowRuns, as loadTrace does) without decoding or building spans, so
 * the difference is what building the trace costs. The text rendering is timed too.
 * Forking at step 900 is timed as `harness fork` does it: the plan read from history (planFork:
 * the turn's runs, the model call of the step, the trace of the steps before it), then the new
 * session started and waited for until its fork is prepared (the 899 steps' conversation copied
 * into its store), i.e. until it is about to make the model call of step 900. The fork's turn
 * stops after that one step (maxSteps 900) so it does not load the next measurements.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { waitForTurn } from '../client/turn-wait';
import { runScript, withScratchHarness } from '../scripts/scratch';
import { loadTrace, type Trace } from '../history/trace';
import { renderTrace } from '../history/trace/render';
import { planFork } from '../history/fork';
import { startForked } from '../client/fork-start';
import { escapeForTerminal } from '../machine/terminal/escape';
import { fmt, median, percentile } from './stats';
import { fetchOnly, runLongSession, time } from './long-session';

const STEPS = Number(process.env.BENCH_STEPS ?? 1000);
const FORK_STEP = Math.max(1, STEPS - 100);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const TARGET_MS = 1000;


const jsonLines = (t: Trace) => t.spans.map((s) => `${JSON.stringify(s.span)}\n`).join('');

/** Baseline: the histories of every run of the session and of its turns, nothing decoded. */


const KEYS = ['fetch', 'trace', 'traceJson', 'json', 'text', 'forkPlan', 'fork'] as const;
type Key = (typeof KEYS)[number];
const LABEL: Record<Key, string> = {
  fetch: 'fetch histories only (baseline)',
  trace: 'loadTrace (fetch + decode + spans)',
  traceJson: 'loadTrace + JSON lines (harness trace --json)',
  json: 'JSON lines rendering alone',
  text: 'text rendering alone',
  forkPlan: `fork at step ${FORK_STEP}: plan from history`,
  fork: `fork at step ${FORK_STEP}: plan + session prepared`,
};

async function main(): Promise<void> {
  const loadStart = os.loadavg();
  await withScratchHarness('bench-trace', async ({ client, taskQueue }) => {
    const { sessionId, turnId } = await runLongSession(client, taskQueue, 'bench-trace', STEPS);
    const ms: Record<Key, number[]> = { fetch: [], trace: [], traceJson: [], json: [], text: [], forkPlan: [], fork: [] };
    let trace: Trace | undefined;
    let base = { runs: 0, events: 0 };
    let bytes = 0;
    for (let run = 0; run < RUNS + 1; run++) {
      // Run 0 warms up (code paths, connections, the server's caches); the order alternates.
      const doFetch = async () => {
        const [t, b] = await time(() => fetchOnly(client, [sessionId, turnId]));
        base = b;
        if (run) ms.fetch.push(t);
      };
      const doTrace = async () => {
        const t0 = performance.now();
        const [t, tr] = await time(() => loadTrace(client, sessionId));
        const [j, lines] = await time(() => jsonLines(tr));
        const all = performance.now() - t0;
        const [x] = await time(() => renderTrace(tr, { full: false, color: false, escape: escapeForTerminal }));
        trace = tr;
        bytes = Buffer.byteLength(lines);
        if (!run) return;
        ms.trace.push(t);
        ms.traceJson.push(all);
        ms.json.push(j);
        ms.text.push(x);
      };
      const doFork = async () => {
        const t0 = performance.now();
        const plan = await planFork(client, turnId, FORK_STEP);
        const planned = performance.now() - t0;
        plan.config = { ...plan.config, limits: { ...plan.config.limits, maxSteps: FORK_STEP } };
        const forkId = `${sessionId}-fork-${run}`;
        const state = await startForked(client, taskQueue, plan, forkId);
        const all = performance.now() - t0;
        if (!state?.fork) throw new Error(`fork ${forkId} was not prepared in time`);
        await waitForTurn(client, `${forkId}/turn-1`, { pollMs: 100 });
        if (!run) return;
        ms.forkPlan.push(planned);
        ms.fork.push(all);
      };
      for (const f of run % 2 ? [doTrace, doFetch] : [doFetch, doTrace]) await f();
      await doFork();
    }
    const t = trace!;
    const types: Record<string, number> = {};
    for (const s of t.spans) types[s.span.type] = (types[s.span.type] ?? 0) + 1;
    const turnSpan = t.spans.find((s) => s.span.type === 'turn')?.span;
    report({ ms, t, types, base, bytes, loadStart, turnWallMs: turnSpan?.duration_ms ?? null });
  });
}

function report(r: {
  ms: Record<Key, number[]>; t: Trace; types: Record<string, number>; base: { runs: number; events: number };
  bytes: number; loadStart: number[]; turnWallMs: number | null;
}): void {
  const load = os.loadavg();
  const nproc = os.availableParallelism();
  const m = (k: Key) => median(r.ms[k]);
  console.log(`bench:trace — one session, one ${STEPS}-step turn, ${RUNS} measured runs (after one warm-up), nproc ${nproc}, load ${load.map((l) => fmt(l)).join(' ')} (at start ${r.loadStart.map((l) => fmt(l)).join(' ')})`);
  console.log(`  histories: ${r.base.runs} runs (session ${r.t.session?.runs ?? '?'}, turn ${r.base.runs - (r.t.session?.runs ?? 0)}), ${r.base.events} events; the turn ran ${r.turnWallMs === null ? '?' : fmt(r.turnWallMs / 1000, 1)} s`);
  console.log(`  trace: ${r.t.spans.length} spans (${Object.entries(r.types).map(([k, v]) => `${k} ${v}`).join(', ')}), JSON lines ${fmt(r.bytes / 1024, 1)} KiB`);
  console.log(`  ${''.padEnd(48)} ${'median'.padStart(8)} ${'p95'.padStart(8)}`);
  for (const k of KEYS) console.log(`  ${LABEL[k].padEnd(48)} ${fmt(m(k)).padStart(8)} ${fmt(percentile(r.ms[k], 95)).padStart(8)}  ms`);
  const spansMs = m('trace') - m('fetch');
  const verdict = m('traceJson') < TARGET_MS ? 'within' : 'over';
  console.log(`  ratio trace+JSON / fetch: ${fmt(m('traceJson') / m('fetch'))}x; decoding + span building ≈ ${fmt(spansMs)} ms (${verdict} the ${TARGET_MS} ms target for the whole: ${fmt(m('traceJson'))} ms)`);
  console.log(`  fork at step ${FORK_STEP}: ${fmt(m('fork'))} ms (${m('fork') < TARGET_MS ? 'within' : 'over'} the ${TARGET_MS} ms target; planning ${fmt(m('forkPlan'))} ms, ratio to fetching the histories ${fmt(m('fork') / m('fetch'))}x)`);
  const summary = (xs: number[]) => ({ median: Number(fmt(median(xs))), p95: Number(fmt(percentile(xs, 95))), n: xs.length });
  console.log(JSON.stringify({
    bench: 'trace', steps: STEPS, runs: RUNS, nproc, loadavg: load.map((l) => Number(fmt(l))), loadavgStart: r.loadStart.map((l) => Number(fmt(l))),
    historyRuns: r.base.runs, historyEvents: r.base.events, spans: r.t.spans.length, spanTypes: r.types, jsonBytes: r.bytes,
    ms: Object.fromEntries(KEYS.map((k) => [k, summary(r.ms[k])])),
    ratioTraceJsonToFetch: Number(fmt(m('traceJson') / m('fetch'))), buildMs: Number(fmt(spansMs)), targetMs: TARGET_MS, withinTarget: verdict === 'within',
    forkStep: FORK_STEP, forkWithinTarget: m('fork') < TARGET_MS,
  }));
}

runScript(main);
