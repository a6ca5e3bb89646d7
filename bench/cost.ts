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
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { DEFAULT_LIMITS, type SessionConfig } from '../common/session';
import { freezePolicy } from '../common/policy';
import { parsePolicy } from '../common/policy/schema';
import { usdText } from '../common/pricing';
import { sendMessage, waitForTurn } from '../client/session-client';
import { runScript, withScratchHarness } from '../scripts/scratch';
import { loadLedger } from '../history/ledger/load';
import { turnLedger } from '../history/ledger/compute';
import type { Ledger } from '../history/ledger/types';
import { fetchRuns } from '../history/trace/runs';
import { readTimeline } from '../history/trace/timeline';
import { workflowRuns } from '../history/workflow-runs';
import { fetchRawRuns } from '../history/ledger/fetch';
import { fmt, median, percentile } from './stats';

const STEPS = Number(process.env.BENCH_STEPS ?? 1000);
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const TARGET_MS = 200;
const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Tokyo', 'Australia/Sydney'];

function config(): SessionConfig {
  const steps = [
    ...Array.from({ length: STEPS - 1 }, (_, i) => ({ tool_calls: [{ name: 'get_current_time', arguments: { timezone: ZONES[i % ZONES.length] } }] })),
    { content: 'done' },
  ];
  return {
    model: { provider: 'scripted', model: 'scripted', script: { steps } },
    systemPrompt: 'bench',
    limits: { ...DEFAULT_LIMITS, maxSteps: STEPS, repeatLimit: 100_000 },
    policy: freezePolicy(parsePolicy({ mode: 'auto', defaults: false })),
    pricing: { model: 'scripted', price: { input: 2, output: 8 }, source: 'config' },
  };
}

/** Baseline: the histories of every run of the session and of its turn, nothing read. */
async function fetchOnly(client: Client, ids: string[]): Promise<{ runs: number; events: number }> {
  let runs = 0;
  let events = 0;
  for (const id of ids) {
    for (const r of await workflowRuns(client, id)) {
      runs++;
      events += r.history.events?.length ?? 0;
    }
  }
  return { runs, events };
}

async function time<T>(fn: () => Promise<T> | T): Promise<[number, T]> {
  const t0 = performance.now();
  const out = await fn();
  return [performance.now() - t0, out];
}

async function main(): Promise<void> {
  const loadStart = os.loadavg();
  await withScratchHarness('bench-cost', async ({ client, taskQueue }) => {
    const sessionId = `bench-cost-${randomUUID().slice(0, 8)}`;
    const { turnId } = await sendMessage(client, { taskQueue, sessionId, config: config(), text: 'go' });
    const out = await waitForTurn(client, turnId, { pollMs: 200 });
    if (out.kind !== 'done' || out.result.steps !== STEPS) throw new Error(`bench turn did not run ${STEPS} steps: ${JSON.stringify(out).slice(0, 2000)}`);
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
    if (l.total.calls !== STEPS || l.total.total_tokens !== out.result.usage.total_tokens) throw new Error(`the ledger counted ${l.total.calls} calls, ${l.total.total_tokens} tokens; the turn made ${STEPS} calls, ${out.result.usage.total_tokens} tokens`);
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
