/**
 * bench:peers — the harness's durable overhead per step against @temporalio/ai-sdk's, measured
 * side by side in one run on one dev server. Both run the same 50-step turn (bench/step-turn.ts:
 * a scripted model answering at once, get_current_time each step as a local activity): the
 * harness on its worker, the peer (bench/peers/ai-sdk, its own folder and node_modules since it
 * pins @temporalio/* 1.23.0) on a worker of its own. Each framework's overhead is its durable
 * time per step minus its own in-process time per step (the same loop without Temporal), turns
 * alternated so a noisy moment weighs on both alike.
 * Target: the harness's overhead >= 3x lower than the peer's.
 * Environment: BENCH_RUNS (5 measured turns each, after one warm-up).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import type { Client } from '@temporalio/client';
import { startScriptedModel, type ScriptedModelServer } from '../scripted-model/server';
import { fmt, median } from './stats';
import { runScript, withScratchHarness } from '../scripts/scratch';
import { durableTurn, inProcessTurns, requestGaps, script, STEPS } from './step-turn';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const PEER = path.resolve(__dirname, '..', '..', 'bench', 'peers', 'ai-sdk');

/** Installs the peer's locked packages once (npm ci into its own folder). */
function installPeer(): void {
  if (existsSync(path.join(PEER, 'node_modules', '@temporalio', 'ai-sdk', 'package.json'))) return;
  console.log(`bench:peers: installing @temporalio/ai-sdk and its pinned packages into ${path.relative(process.cwd(), PEER)}/node_modules (once)`);
  execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: PEER, stdio: 'inherit' });
}

/** Starts the peer's worker and resolves once it polls; closing its stdin shuts it down. */
async function startPeerWorker(address: string, taskQueue: string, modelUrl: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [path.join(PEER, 'worker.js'), address, taskQueue, modelUrl], { cwd: PEER, stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the peer's worker exited (${code}) before it was ready`)));
    createInterface({ input: child.stdout! }).on('line', (line) => line === 'ready' && resolve());
  });
  return child;
}

/** One durable peer turn: per-step times from its model requests. */
async function peerTurn(client: Client, taskQueue: string, model: ScriptedModelServer): Promise<{ steps: number[] }> {
  const sessionId = `peer-${randomUUID().slice(0, 8)}`;
  model.registerScript(sessionId, script);
  const handle = await client.workflow.start('peerTurn', { taskQueue, workflowId: sessionId, args: [{ sessionId, steps: STEPS }] });
  const out = (await Promise.race([handle.result(), stuck(handle, 60_000)])) as { steps: number };
  if (out.steps !== STEPS) throw new Error(`the peer's turn ran ${out.steps} steps, not ${STEPS}`);
  return { steps: requestGaps(model, sessionId) };
}

/** Rejects after `ms` with what the peer's history says went wrong (a failed workflow task retries forever). */
async function stuck(handle: ReturnType<Client['workflow']['getHandle']>, ms: number): Promise<never> {
  await new Promise((resolve) => setTimeout(resolve, ms).unref());
  const events = (await handle.fetchHistory()).events ?? [];
  const failed = [...events].reverse().find((e) => e.workflowTaskFailedEventAttributes || e.activityTaskFailedEventAttributes);
  const failure = failed?.workflowTaskFailedEventAttributes?.failure ?? failed?.activityTaskFailedEventAttributes?.failure;
  throw new Error(`the peer's turn ${handle.workflowId} did not end within ${ms / 1000} s (${events.length} events${failure ? `; last failure: ${failure.message}` : ''})`);
}

/**
 * The peer's in-process baseline, in a process of its own (its packages), against the same
 * scripted model; asynchronously, since that model is served by this process.
 */
async function peerInProcess(model: ScriptedModelServer): Promise<{ steps: number[] }> {
  const sessions = Array.from({ length: RUNS + 1 }, () => `peer-inproc-${randomUUID().slice(0, 8)}`);
  for (const s of sessions) model.registerScript(s, script);
  await promisify(execFile)(process.execPath, [path.join(PEER, 'in-process.js'), model.url, String(STEPS), ...sessions], { cwd: PEER, encoding: 'utf8' });
  return { steps: sessions.slice(1).flatMap((s) => requestGaps(model, s)) }; // the first turn warms up
}

async function main(): Promise<void> {
  installPeer();
  await withScratchHarness('peers', async ({ client, taskQueue, home, address, declarations }) => {
    const model = await startScriptedModel({});
    declarations.add({ modelEndpoints: [model.url] });
    const peerQueue = `peer-${randomUUID()}`;
    const worker = await startPeerWorker(address, peerQueue, model.url);
    try {
      const ours: number[] = [];
      const peer: number[] = [];
      for (let run = 0; run < RUNS + 1; run++) {
        const a = await durableTurn(client, taskQueue, 'store', model);
        const b = await peerTurn(client, peerQueue, model);
        if (run === 0) continue; // warm-up: bundles, connections
        ours.push(...a.steps);
        peer.push(...b.steps);
      }
      const oursBase = median((await inProcessTurns(home, RUNS, model)).steps);
      const peerBase = median((await peerInProcess(model)).steps);
      const oursOverhead = median(ours) - oursBase;
      const peerOverhead = median(peer) - peerBase;
      console.log(`bench:peers — ${STEPS}-step turn, ${RUNS} measured runs each (after one warm-up), ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)}`);
      console.log(`  harness:            durable ${fmt(median(ours))} ms/step, in-process ${fmt(oursBase)}, overhead ${fmt(oursOverhead)} ms/step`);
      console.log(`  @temporalio/ai-sdk: durable ${fmt(median(peer))} ms/step, in-process ${fmt(peerBase)}, overhead ${fmt(peerOverhead)} ms/step`);
      console.log(`  the peer's overhead / the harness's: ${fmt(peerOverhead / oursOverhead)}x (target >= 3)`);
    } finally {
      worker.stdin!.end();
      await new Promise((resolve) => worker.once('exit', resolve));
      await model.close();
    }
  });
}

runScript(main);
