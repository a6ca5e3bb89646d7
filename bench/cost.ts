/**
 * bench:cost — what the ledger of a long session costs. A session whose one turn runs 1,000
 * steps (scripted model with no delay, get_current_time each step; the turn continues as new
 * several times; priced) runs on a real Temporal dev server; then, several times, its ledger is
 * built as `harness cost <session>` does (loadLedger: the session's runs name its turn, whose close
 * event holds the tally it counted; target: under 200 ms), and as `harness cost --calls` does
 * (every event of every run read and counted; the two must agree). Baseline in the same run,
 * alternated with them: fetching the same histories alone (workflowRuns, as the trace does, and
 * as the full read does), so the ratios are against reading everything. The pure count over an
 * already-read timeline is timed too.
 */
import os from 'node:os';
import { usdText } from '../deterministic/pricing';
import { runScript, withScratchHarness } from '../scripts/scratch';
import { loadLedger } from '../history/ledger/load';
import { turnLedger } from '../history/ledger/compute';
import type { Ledger } from '../history/ledger/types';
import { fetchRuns } from '../history/trace/runs';
import { readTimeline } from '../history/trace/timeline';
import { fetchRawRuns } from '../history/ledger/fetch';
import { fmt, median, percentile } from './stats';
import { fetchOnly, runLongSession, time } from './long-session';

const STEPS = Number(process.env.BENCH_STEPS ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const TARGET_MS = 200;




async function main(): Promise<void> {
  const loadStart = os.loadavg();
  await withScratchHarness('bench-cost', async ({ client, taskQueue }) => {
    const { sessionId, turnId, result } = await runLongSession(client, taskQueue, 'bench-cost', STEPS, { pricing: { model: 'scripted', price: { input: 2, output: 8 }, source: 'config' } });
    const timeline = readTimeline(await fetchRuns(client, turnId));
    const ms = { fetch: [] as number[], rawFetch: [] as number[], ledger: [] as number[], scan: [] as number[], count: [] as number[] };
    let base = { runs: 0, events: 0 };
    let ledger: Ledger | undefined;
    for (let run = 0; run < RUNS + 1; run++) {
      // Run 0 warms up (code paths, connections, the server's caches); the order alternates.
      const doFetch = async () => {
        const [t, b] = await time(() => fetchOnly(client, [sessionId, turnId]));
        base = b;
        if (run) ms.fetch.push(t);
      };
      const doLedger = async () => {
        const [t, l] = await time(() => loadLedger(client, sessionId));
        ledger = l;
        if (run) ms.ledger.push(t);
      };
      const doScan = async () => {
        const [t, l] = await time(() => loadLedger(client, sessionId, { calls: true }));
        if (l.total.total_tokens !== ledger?.total.total_tokens || l.total.nanoUsd !== ledger?.total.nanoUsd) throw new Error('the ledger from every event differs from the recorded one');
        if (run) ms.scan.push(t);
      };
      const doRawFetch = async () => {
        const [t] = await time(async () => Promise.all([fetchRawRuns(client, sessionId), fetchRawRuns(client, turnId)]));
        if (run) ms.rawFetch.push(t);
      };
      for (const f of run % 2 ? [doLedger, doScan, doFetch, doRawFetch] : [doFetch, doRawFetch, doLedger, doScan]) await f();
      const [c] = await time(() => turnLedger(turnId, timeline));
      if (run) ms.count.push(c);
    }
    const l = ledger!;
    if (l.total.calls !== STEPS || l.total.total_tokens !== result.usage.total_tokens) throw new Error(`the ledger counted ${l.total.calls} calls, ${l.total.total_tokens} tokens; the turn made ${STEPS} calls, ${result.usage.total_tokens} tokens`);
    const load = os.loadavg();
    const nproc = os.availableParallelism();
    const m = (k: keyof typeof ms) => median(ms[k]);
    console.log(`bench:cost — one session, one ${STEPS}-step turn, ${RUNS} measured runs (after one warm-up), nproc ${nproc}, load ${load.map((x) => fmt(x)).join(' ')} (at start ${loadStart.map((x) => fmt(x)).join(' ')})`);
    console.log(`  histories: ${base.runs} runs, ${base.events} events; the ledger: ${l.total.calls} model calls, ${l.total.total_tokens} tokens, ${usdText(l.total.nanoUsd ?? 0)}`);
    console.log(`  ${''.padEnd(52)} ${'median'.padStart(8)} ${'p95'.padStart(8)}`);
    const label = {
      fetch: 'fetch histories only (baseline, as the trace does)',
      rawFetch: 'fetch histories as the ledger does',
      ledger: 'ledger of the session (harness cost)',
      scan: 'ledger from every event (harness cost --calls)',
      count: 'counting alone (a timeline already read)',
    };
    for (const k of ['fetch', 'rawFetch', 'ledger', 'scan', 'count'] as const) console.log(`  ${label[k].padEnd(52)} ${fmt(m(k)).padStart(8)} ${fmt(percentile(ms[k], 95)).padStart(8)}  ms`);
    const within = m('ledger') < TARGET_MS;
    console.log(`  ratio ledger / fetch: ${fmt(m('ledger') / m('fetch'))}x; the ledger ${fmt(m('ledger'))} ms is ${within ? 'within' : 'over'} the ${TARGET_MS} ms target`);
    console.log(JSON.stringify({
      bench: 'cost', steps: STEPS, runs: RUNS, nproc, loadavg: load.map((x) => Number(fmt(x))), loadavgStart: loadStart.map((x) => Number(fmt(x))),
      historyRuns: base.runs, historyEvents: base.events,
      ms: Object.fromEntries((['fetch', 'rawFetch', 'ledger', 'scan', 'count'] as const).map((k) => [k, { median: Number(fmt(m(k))), p95: Number(fmt(percentile(ms[k], 95))), n: ms[k].length }])),
      ratioLedgerToFetch: Number(fmt(m('ledger') / m('fetch'))), targetMs: TARGET_MS, withinTarget: within,
    }));
  });
}

runScript(main);
