/**
 * How fast a lost worker is replaced, with the default limits and the default deployment (the
 * embedded database under HARNESS_HOME): a worker SIGKILLed while a model call waits for its
 * answer, ten times; and while a session waits for the run `harness retry` reset. The recovery
 * time is from the kill to the replacement worker completing the interrupted call (the
 * completion's time in history); the figures are printed with the machine's load.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../deterministic/session-config';
import { sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import type { Script } from '../../scripted-model/script';
import { endpointConfig, newSessionId } from '../support/harness';
import { decodeEvents, type HistoryEvent } from '../../history/trace/events';
import { modelProgress } from '../../client/model-progress';
import { kill, spawnWorker } from '../support/processes';
import { cliEnv, describeResult, runCli } from '../support/cli';
import { figure } from '../support/figures';

const KILLS = 10;

let client: Client;
let model: ScriptedModelServer;
const workers: ChildProcess[] = [];
const homes: string[] = [];

beforeAll(async () => {
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
  model = await startScriptedModel();
});
afterAll(async () => {
  for (const w of workers) await kill(w, 'SIGKILL');
  await model?.close();
  await client?.connection.close();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

/** A worker environment on a fresh home, with the embedded database (no DATABASE_URL). */
function workerEnv(): NodeJS.ProcessEnv {
  const home = mkdtempSync(path.join(os.tmpdir(), 'harness-recovery-'));
  homes.push(home);
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `recovery-${randomUUID()}`, HARNESS_HOME: home, OPENAI_BASE_URL: model.url });
  delete env.DATABASE_URL;
  return env;
}

/** Resolves on the first request of the session's step `index`. */
function firstRequest(sessionId: string, index: number): Promise<void> {
  return new Promise((resolve) => {
    const stop = model.onRequest((r) => {
      if (r.session === sessionId && r.index === index) {
        stop();
        resolve();
      }
    });
  });
}

/** Resolves once the turn's model call runs as an activity (pending on the server). */
async function handedOn(turnId: string): Promise<void> {
  for (;;) {
    if (modelProgress(await client.workflow.getHandle(turnId).describe())) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** How long each replacement worker took from the kill to saying ready (it polls from then on). */
const startups: number[] = [];

/** Kills the newest worker and starts its replacement; returns the time of the kill. */
async function killAndReplace(env: NodeJS.ProcessEnv): Promise<number> {
  const at = Date.now();
  await kill(workers[workers.length - 1], 'SIGKILL');
  workers.push(await spawnWorker(env));
  startups.push(Date.now() - at);
  return at;
}

const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + Math.floor((t?.nanos ?? 0) / 1e6);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
const load = () => execFileSync('uptime', { encoding: 'utf8' }).trim();

/**
 * The time each model call of a workflow completed, with the attempt that completed it: as an
 * activity, or (a quick call) as a local activity, whose marker says when it completed.
 */
async function modelCompletions(workflowId: string): Promise<{ at: number; attempt: number }[]> {
  const events = decodeEvents(((await client.workflow.getHandle(workflowId).fetchHistory()).events ?? []) as HistoryEvent[]);
  const calls = new Set(events.flatMap((e) => (e.kind === 'scheduled' && e.activityType === 'callModel' ? [e.id] : [])));
  return events.flatMap((e) => {
    if (e.kind !== 'activityCompleted' || !calls.has(e.scheduledId)) return [];
    const reply = e.result as { attempt?: unknown };
    return typeof reply?.attempt === 'number' ? [{ at: e.at, attempt: reply.attempt }] : [];
  });
}

it(`recovers a model call whose worker was SIGKILLed within 15 s (median of ${KILLS} kills, default heartbeat)`, async () => {
  const env = workerEnv();
  const sessionId = newSessionId('recover');
  // Every step's first request hangs until its worker is killed; the retry answers at once.
  const script: Script = {
    steps: [
      // Distinct calls: the repeat guard would end a turn that asks the same thing again and again.
      ...Array.from({ length: KILLS }, (_, i) => ({ fault: { delay_ms: 120_000 }, tool_calls: [{ name: 'remember', arguments: { key: `kill-${i}`, value: 'survived' } }] })),
      { content: 'Survived every kill. HARNESS_OK' },
    ],
  };
  model.registerScript(sessionId, script);
  const before = load();
  workers.push(await spawnWorker(env));
  const config = endpointConfig(model.url, { modelHeartbeatMs: DEFAULT_LIMITS.modelHeartbeatMs, modelTimeoutMs: 180_000 });
  const inFlight = firstRequest(sessionId, 0);
  const { turnId } = await sendMessage(client, { taskQueue: env.HARNESS_TASK_QUEUE!, sessionId, config, text: 'survive' });
  const turn = waitForTurn(client, turnId, { pollMs: 200 });
  // A turn that ends early fails the test instead of leaving it waiting for a request.
  const ended = turn.then((out) => Promise.reject(new Error(`the turn ended before every kill: ${JSON.stringify(out).slice(0, 300)}`)));
  ended.catch(() => undefined);
  const kills: number[] = [];
  let next = inFlight;
  for (let i = 0; i < KILLS; i++) {
    await Promise.race([next, ended]);
    next = firstRequest(sessionId, i + 1);
    // The call runs in the turn's workflow task for its first seconds (limits.modelLocalMs),
    // then, slow, as an activity of its own: the kill lands there, where its heartbeat tells
    // Temporal it is lost. (A kill inside the workflow task: test/durability/crash.test.ts.)
    await Promise.race([handedOn(turnId), ended]);
    kills.push(await killAndReplace(env));
  }
  const out = await turn;
  expect(out.kind === 'done' && out.result.answer).toBe('Survived every kill. HARNESS_OK');

  // Each interrupted call completed on its second attempt (no heartbeat timed out falsely), and
  // no step was asked of the model more than the once its kill took.
  const completions = await modelCompletions(turnId);
  expect(completions.map((c) => c.attempt)).toEqual([...Array.from({ length: KILLS }, () => 2), 1]);
  const sent = (i: number) => model.requests.filter((r) => r.session === sessionId && r.index === i).length;
  expect(Array.from({ length: KILLS + 1 }, (_, i) => sent(i))).toEqual([...Array.from({ length: KILLS }, () => 2), 1]);
  const recovery = kills.map((k, i) => completions[i]!.at - k);
  const after = load();
  figure('recovery', 
    `model-call recovery after SIGKILL (ms): ${recovery.join(', ')}; median ${median(recovery)}; ` +
      `replacement worker ready after (ms): ${startups.join(', ')}; ` +
      `heartbeat ${DEFAULT_LIMITS.modelHeartbeatMs} ms; load before: ${before}; after: ${after}`,
  );
  startups.length = 0;
  expect(median(recovery)).toBeLessThanOrEqual(15_000);
}, 900_000);

it('shows the session right within 15 s after its worker is killed while it waits for a retried turn', async () => {
  const env = workerEnv();
  const sessionId = newSessionId('recover-retry');
  model.registerScript(sessionId, {
    steps: [
      { tool_calls: [{ name: 'get_current_time', arguments: {} }] },
      // Down past the turn's two attempts: the turn fails; `harness retry` asks a third time.
      { fault: { status: 503, times: 2 }, tool_calls: [{ name: 'remember', arguments: { key: 'retried', value: 'yes' } }] },
      // The retried run's next call hangs until the worker is killed.
      { fault: { delay_ms: 120_000 }, content: 'Retried and recovered. HARNESS_OK' },
    ],
  });
  workers.push(await spawnWorker(env));
  const config = endpointConfig(model.url, { modelHeartbeatMs: DEFAULT_LIMITS.modelHeartbeatMs, modelMaxAttempts: 2, modelRetryWindowMs: 0, modelTimeoutMs: 180_000 });
  const { turnId } = await sendMessage(client, { taskQueue: env.HARNESS_TASK_QUEUE!, sessionId, config, text: 'fail, then recover' });
  const failed = await waitForTurn(client, turnId, { pollMs: 200 });
  expect(failed.kind === 'done' && failed.result.terminated_by).toBe('failed');
  await expect.poll(async () => (await sessionState(client, sessionId)).lastTurn?.terminated_by, { timeout: 20_000 }).toBe('failed');

  const hung = firstRequest(sessionId, 2);
  const retry = await runCli(['retry', turnId, '--no-wait', '--json'], { env, timeoutMs: 120_000 });
  expect(retry.code, describeResult(retry)).toBe(0);
  await hung;
  await expect.poll(async () => (await sessionState(client, sessionId)).status, { timeout: 20_000 }).toBe('running');
  const killedAt = await killAndReplace(env);

  // Correct: idle again, with the retried turn's answer in place of the failure.
  await expect
    .poll(async () => {
      const s = await sessionState(client, sessionId);
      return `${s.status} ${s.lastTurn?.terminated_by}`;
    }, { timeout: 120_000, interval: 200 })
    .toBe('idle final_answer');
  const correctAfter = Date.now() - killedAt;
  // Where the time went, from the kill: the replacement polling, the turn's call completing on
  // it, the turn's end and the session's wait for it (awaitTurnRun) completing.
  const turnEvents = (await client.workflow.getHandle(turnId).fetchHistory()).events ?? [];
  const sessionEvents = (await client.workflow.getHandle(sessionId).fetchHistory()).events ?? [];
  const since = (e: { eventTime?: unknown } | undefined) => (e ? ms(e.eventTime as Parameters<typeof ms>[0]) - killedAt : NaN);
  const breakdown = {
    workerReady: startups.at(-1),
    modelCallDone: since(turnEvents.filter((e) => e.activityTaskCompletedEventAttributes).at(-1)),
    turnDone: since(turnEvents.at(-1)),
    sessionWaitDone: since(sessionEvents.filter((e) => e.activityTaskCompletedEventAttributes).at(-1)),
  };
  figure('recovery', `session view right ${correctAfter} ms after the worker was killed during a retry (${JSON.stringify(breakdown)}); load: ${load()}`);
}, 300_000);
