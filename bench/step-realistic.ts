/**
 * bench:step:realistic — what a durable step costs when the model takes as long as a real one.
 * bench:step times a model that answers at once, so every millisecond of the worker shows; here
 * the scripted model answers each call after BENCH_MODEL_MS (default 1,000 ms) and BENCH_SESSIONS
 * sessions (default 12) run a turn of BENCH_STEPS steps (default 10, a no-op tool each) at once,
 * the shape a real worker sees.
 *
 * Two `harness worker` processes on one dev server, each with its own task queue and home (the
 * embedded message store): one with the harness's workflow threads (workers/workflow-threads.ts),
 * one with the SDK's own (HARNESS_WORKFLOW_THREADS=sdk). Rounds alternate between them (one
 * warm-up round each, then BENCH_ROUNDS measured rounds each, default 4, the order swapped every
 * round so each arm goes first as often) so a noisy moment of the machine weighs on both alike.
 *
 * Per step: its harness overhead, the time from one model request's arrival at the scripted model
 * to the next less the model's own BENCH_MODEL_MS; the worker process's CPU (/proc, all threads)
 * and the dev server's over the round, divided by the round's steps. Medians per arm, each
 * round's own figure, and the ratio SDK threads / harness threads.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { DEFAULT_LIMITS, type SessionConfig } from '../deterministic/session-config';
import { sendMessage } from '../client/session-client';
import { waitForTurn } from '../client/turn-wait';
import { embeddedFiles } from '../client/embedded';
import { spawnDevServer, waitForServer } from '../client/dev-server';
import { temporalSettings } from '../client/temporal-settings';
import { projectRoot } from '../machine/paths';
import { startScriptedModel, type ScriptedModelServer } from '../scripted-model/server';
import { freePort } from '../scripts/free-port';
import { requestGaps } from './step-turn';
import { processCpuMs } from './cpu';
import { fmt, median } from './stats';
import { stopChildProcess } from './child-stop';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 12);
const STEPS = Number(process.env.BENCH_STEPS ?? 10);
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const WORKER_READY_MS = 120_000;
const CLI = path.join(projectRoot(), 'bin', 'harness.js');

for (const [name, x] of [['BENCH_SESSIONS', SESSIONS], ['BENCH_STEPS', STEPS], ['BENCH_ROUNDS', ROUNDS]] as const) {
  if (!Number.isInteger(x) || x < 1) throw new Error(`${name} must be a positive whole number`);
}
if (!Number.isInteger(MODEL_MS) || MODEL_MS < 0) throw new Error('BENCH_MODEL_MS must be a whole number of milliseconds');

/** The two arms: the harness's workflow threads, and the SDK's own. */
const ARMS = { harness: {}, sdk: { HARNESS_WORKFLOW_THREADS: 'sdk' } } as const;
type Arm = keyof typeof ARMS;

const script = {
  steps: [
    ...Array.from({ length: STEPS - 1 }, (_, i) => ({ fault: { delay_ms: MODEL_MS }, tool_calls: [{ name: 'get_current_time', arguments: { timezone: i % 2 ? 'UTC' : 'Europe/Paris' } }] })),
    { fault: { delay_ms: MODEL_MS }, content: 'done' },
  ],
};

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

interface WorkerProc {
  arm: Arm;
  child: ChildProcess;
  pid: number;
  taskQueue: string;
  home: string;
  log: string[];
}

/** Starts `harness worker` for one arm; resolves once it says `worker ready`. */
async function startWorker(arm: Arm, address: string, modelUrl: string): Promise<WorkerProc> {
  const home = realpathSync(mkdtempSync(path.join(os.tmpdir(), `bench-realistic-${arm}-`)));
  const taskQueue = `bench-realistic-${arm}-${randomUUID().slice(0, 8)}`;
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(TEMPORAL_|HARNESS_|OTEL_|OPENAI_)/.test(k) || k === 'DATABASE_URL') delete env[k];
  // OPENAI_BASE_URL declares the scripted model's endpoint (a loopback one needs no key).
  Object.assign(env, { TEMPORAL_ADDRESS: address, HARNESS_TASK_QUEUE: taskQueue, HARNESS_HOME: home, OPENAI_BASE_URL: modelUrl, HARNESS_DRAIN_GRACE_SEC: '5' }, ARMS[arm]);
  const child = spawn(process.execPath, [CLI, 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const w: WorkerProc = { arm, child, pid: child.pid!, taskQueue, home, log: [] };
  const onData = (d: Buffer) => {
    w.log.push(...d.toString().split('\n').filter(Boolean));
    if (w.log.length > 500) w.log.splice(0, 100);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const deadline = Date.now() + WORKER_READY_MS;
  while (!w.log.some((l) => l.includes('worker ready'))) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${arm} worker exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${w.log.join('\n')}`);
    if (Date.now() > deadline) throw new Error(`${arm} worker was not ready within ${WORKER_READY_MS / 1000} s:\n${w.log.join('\n')}`);
    await sleep(100);
  }
  return w;
}

async function stopWorker(w: WorkerProc): Promise<void> {
  await stopChildProcess(w.child);
  children.delete(w.child);
  rmSync(w.home, { recursive: true, force: true });
}

/** One round's measurements. */
interface Round {
  /** Each step's overhead: request to request, less the model's time (ms). */
  overhead: number[];
  workerCpuPerStep: number;
  serverCpuPerStep: number;
}

/** SESSIONS sessions at once on one arm's worker, each one turn of STEPS steps. */
async function round(client: Client, w: WorkerProc, server: ScriptedModelServer, serverPid: number): Promise<Round> {
  const config: SessionConfig = {
    model: { provider: 'openai', model: 'scripted', baseUrl: server.url },
    systemPrompt: 'bench',
    limits: { ...DEFAULT_LIMITS, maxSteps: STEPS, repeatLimit: 1000 },
  };
  const ids = Array.from({ length: SESSIONS }, () => `bench-${w.arm}-${randomUUID().slice(0, 8)}`);
  for (const id of ids) server.registerScript(id, script);
  const [w0, s0] = [processCpuMs(w.pid), processCpuMs(serverPid)];
  await Promise.all(
    ids.map(async (sessionId) => {
      const { turnId } = await sendMessage(client, { taskQueue: w.taskQueue, sessionId, config, text: 'go' });
      const out = await waitForTurn(client, turnId);
      if (out.kind !== 'done' || out.result.steps !== STEPS) throw new Error(`${w.arm}: a turn did not run ${STEPS} steps: ${JSON.stringify(out).slice(0, 500)}`);
    }),
  );
  const [w1, s1] = [processCpuMs(w.pid), processCpuMs(serverPid)];
  const steps = SESSIONS * STEPS;
  return {
    overhead: ids.flatMap((id) => requestGaps(server, id)).map((gap) => gap - MODEL_MS),
    workerCpuPerStep: (w1 - w0) / steps,
    serverCpuPerStep: (s1 - s0) / steps,
  };
}

async function main(): Promise<void> {
  const nproc = os.availableParallelism();
  const loadStart = os.loadavg();
  const serverHome = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'bench-realistic-server-')));
  const settings = temporalSettings({
    HARNESS_EMBEDDED_PORT: String(await freePort()),
    HARNESS_UI_PORT: String(await freePort()),
    HARNESS_HTTP_PORT: String(await freePort()),
    HARNESS_METRICS_PORT: String(await freePort()),
  });
  // Detached only to log to a file; it is stopped below, and on exit.
  const devServer = spawnDevServer(settings, serverHome, { detached: true });
  children.add(devServer);
  const model = await startScriptedModel({});
  const workers: WorkerProc[] = [];
  let client: Client | undefined;
  const rounds: Record<Arm, Round[]> = { harness: [], sdk: [] };
  try {
    await waitForServer(settings, embeddedFiles(serverHome).serverLog, 60_000, devServer);
    client = new Client({ connection: await Connection.connect({ address: settings.address }) });
    const byArm = { harness: await startWorker('harness', settings.address, model.url), sdk: await startWorker('sdk', settings.address, model.url) };
    workers.push(byArm.harness, byArm.sdk);
    for (let r = 0; r < ROUNDS + 1; r++) {
      const order: Arm[] = r % 2 ? ['harness', 'sdk'] : ['sdk', 'harness'];
      for (const arm of order) {
        const got = await round(client, byArm[arm], model, devServer.pid!);
        if (r === 0) continue; // warm-up: the workflow bundle, the store, connections
        rounds[arm].push(got);
        console.log(`  round ${r} ${arm.padEnd(7)}: overhead median ${fmt(median(got.overhead))} ms/step; CPU a step: worker ${fmt(got.workerCpuPerStep, 1)} ms, dev server ${fmt(got.serverCpuPerStep, 1)} ms`);
      }
    }
  } finally {
    await Promise.all(workers.map(stopWorker));
    await client?.connection.close().catch(() => undefined);
    await model.close();
    devServer.kill('SIGTERM');
    await Promise.race([new Promise((r) => devServer.once('exit', r)), sleep(10_000)]);
    if (devServer.exitCode === null && devServer.signalCode === null) devServer.kill('SIGKILL');
    children.delete(devServer);
    rmSync(serverHome, { recursive: true, force: true });
  }

  const sum = (arm: Arm) => {
    const rs = rounds[arm];
    return {
      overhead: median(rs.flatMap((r) => r.overhead)),
      overheadByRound: rs.map((r) => median(r.overhead)),
      workerCpu: median(rs.map((r) => r.workerCpuPerStep)),
      workerCpuByRound: rs.map((r) => r.workerCpuPerStep),
      serverCpu: median(rs.map((r) => r.serverCpuPerStep)),
    };
  };
  const h = sum('harness');
  const s = sum('sdk');
  const load = os.loadavg();
  const list = (xs: number[], d = 1) => xs.map((x) => fmt(x, d)).join(' / ');
  console.log(`bench:step:realistic — ${SESSIONS} sessions at once, ${STEPS}-step turns, the model answering after ${MODEL_MS} ms; ${ROUNDS} measured rounds each after a warm-up; nproc ${nproc}, load ${load.map((l) => fmt(l)).join(' ')} (at start ${loadStart.map((l) => fmt(l)).join(' ')})`);
  console.log(`  harness threads: overhead median ${fmt(h.overhead)} ms/step (rounds ${list(h.overheadByRound)}); worker CPU ${fmt(h.workerCpu, 1)} ms/step (rounds ${list(h.workerCpuByRound)}); dev server ${fmt(h.serverCpu, 1)} ms/step`);
  console.log(`  SDK threads:     overhead median ${fmt(s.overhead)} ms/step (rounds ${list(s.overheadByRound)}); worker CPU ${fmt(s.workerCpu, 1)} ms/step (rounds ${list(s.workerCpuByRound)}); dev server ${fmt(s.serverCpu, 1)} ms/step`);
  console.log(`  SDK / harness: overhead ${fmt(s.overhead / h.overhead)}x (${fmt(s.overhead - h.overhead)} ms/step, ${fmt((100 * (s.overhead - h.overhead)) / (MODEL_MS + h.overhead), 2)} % of a step); worker CPU ${fmt(s.workerCpu / h.workerCpu)}x (${fmt(s.workerCpu - h.workerCpu, 1)} ms/step)`);
  console.log(
    JSON.stringify({
      bench: 'step-realistic', sessions: SESSIONS, steps: STEPS, modelMs: MODEL_MS, rounds: ROUNDS, nproc,
      loadavgStart: loadStart.map((l) => Number(fmt(l))), loadavgEnd: load.map((l) => Number(fmt(l))),
      harness: h, sdk: s,
    }),
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
