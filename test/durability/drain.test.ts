/**
 * Graceful drain: a `harness worker` sent SIGTERM while a run_shell command runs stops polling,
 * lets the command finish and records its result, keeps the session's sandbox container, and
 * exits by itself within the drain grace; a second worker on the same task queue and home goes on
 * with the turn from there, repeating nothing. A command longer than the grace is cancelled (it
 * cannot be: it runs on in its container), the worker exits at grace + margin anyway, and the
 * second worker's retry follows the same command to its end: the line is still written once.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import Docker from 'dockerode';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { decideApprovals, sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { containerName } from '../../activities/sandbox/containers';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import { decodeEvents, type HistoryEvent } from '../../history/trace/events';
import { DEFAULT_POLICY, endpointConfig, newSessionId, TEST_DATABASE_URL } from '../support/harness';
import { kill, spawnWorker, until } from '../support/processes';
import { cliEnv, removeTempDirs, runCli } from '../support/cli';
import { figure } from '../support/figures';

const docker = new Docker();
let client: Client;
const workers: ChildProcess[] = [];
const servers: ScriptedModelServer[] = [];
const homes: string[] = [];
const sessions: string[] = [];

beforeAll(async () => {
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
});

afterAll(async () => {
  for (const w of workers) await kill(w, 'SIGKILL');
  for (const s of servers) await s.close();
  for (const id of sessions) {
    await client.workflow.getHandle(id).terminate('test over').catch(() => undefined);
    await docker.getContainer(containerName(id)).remove({ force: true }).catch(() => undefined);
  }
  await client?.connection.close();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
  removeTempDirs();
});

/** A worker whose output from now on is kept, and when it exited. */
function watch(child: ChildProcess) {
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
  );
  return { output: () => output, exited };
}

/** The worker's own lines about its drain. */
const drainLines = (output: string) => output.split('\n').filter((l) => /^worker (draining|drained|stopped)/.test(l)).join('\n');


/** A session on a fresh home and task queue whose first step runs `command` under the default policy (approved here). */
async function startShellSession(label: string, command: string, extraEnv: Record<string, string> = {}) {
  const home = mkdtempSync(path.join(os.tmpdir(), `harness-${label}-`));
  homes.push(home);
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `${label}-${randomUUID()}`, HARNESS_HOME: home, DATABASE_URL: TEST_DATABASE_URL, ...extraEnv });
  const sessionId = newSessionId(label);
  sessions.push(sessionId);
  const model = await startScriptedModel({
    script: {
      steps: [
        { tool_calls: [{ name: 'run_shell', arguments: { command } }] },
        { expect: { last_message_contains: '"exit_code":0' }, content: 'The command ran. HARNESS_OK' },
      ],
    },
  });
  servers.push(model);
  // The worker's own endpoint: the one its environment declares.
  env.OPENAI_BASE_URL = model.url;
  const first = await spawnWorker(env);
  workers.push(first);
  const log = watch(first);
  const config = endpointConfig(model.url, { modelHeartbeatMs: 2_000, modelTimeoutMs: 120_000 }, DEFAULT_POLICY);
  const { turnId } = await sendMessage(client, { taskQueue: env.HARNESS_TASK_QUEUE!, sessionId, config, text: 'run the command' });
  // The default policy asks about run_shell: a person approves it.
  await until('the run_shell approval', async () => {
    const st = await sessionState(client, sessionId);
    return st.pending?.kind === 'approvals' && st.pending.calls[0]?.tool === 'run_shell';
  });
  await decideApprovals(client, sessionId, { approve: true });
  const ws = (f: string) => path.join(home, 'workspaces', sessionId, f);
  await until('the command to start', () => existsSync(ws('started.txt')));
  return { env, sessionId, turnId, model, first, log, ws };
}

/** The turn's executeTool activity in history: how often it was scheduled and started, and by whom it completed. */
async function toolActivity(turnId: string) {
  const events = (await client.workflow.getHandle(turnId).fetchHistory()).events!;
  const scheduled = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'executeTool');
  const ids = new Set(scheduled.map((e) => String(e.eventId)));
  const started = events.filter((e) => e.activityTaskStartedEventAttributes && ids.has(String(e.activityTaskStartedEventAttributes.scheduledEventId)));
  const completed = events.filter((e) => e.activityTaskCompletedEventAttributes && ids.has(String(e.activityTaskCompletedEventAttributes.scheduledEventId)));
  const failed = events.filter((e) => (e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes) && ids.has(String((e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes)!.scheduledEventId)));
  // Model calls, whether activities or (quick ones) local activities, as the trace reads them.
  const callModels = decodeEvents(events as HistoryEvent[]).filter((e) => e.kind === 'scheduled' && e.activityType === 'callModel');
  // The turn's next workflow task after the call completed: who started it, and how soon.
  const doneAt = events.findIndex((e) => e.activityTaskCompletedEventAttributes && ids.has(String(e.activityTaskCompletedEventAttributes.scheduledEventId)));
  const next = doneAt < 0 ? undefined : events.slice(doneAt + 1).find((e) => e.workflowTaskStartedEventAttributes);
  const ms = (e: (typeof events)[number] | undefined) => Number(e?.eventTime?.seconds ?? 0) * 1000 + Math.floor((e?.eventTime?.nanos ?? 0) / 1e6);
  return {
    scheduled: scheduled.length,
    attempts: started.map((e) => e.activityTaskStartedEventAttributes!.attempt),
    startedBy: started.map((e) => e.activityTaskStartedEventAttributes!.identity ?? ''),
    completedBy: completed.map((e) => e.activityTaskCompletedEventAttributes!.identity ?? ''),
    failed: failed.length,
    callModels: callModels.length,
    nextTaskBy: next?.workflowTaskStartedEventAttributes?.identity ?? '',
    nextTaskAfterMs: next ? ms(next) - ms(events[doneAt]) : undefined,
  };
}

it('SIGTERM during a run_shell command: the worker finishes and records the call, keeps the sandbox, exits within the grace; a second worker finishes the turn repeating nothing', async () => {
  // The default grace (30 s): the command's remaining 4 s fit in it.
  const command = 'echo started > started.txt; sleep 4; echo drained-once >> drain.txt';
  const { env, sessionId, turnId, model, first, log, ws } = await startShellSession('drain', command);

  const signalled = Date.now();
  first.kill('SIGTERM');
  // The replacement starts at once, while the first one drains.
  const second = await spawnWorker(env);
  workers.push(second);
  const exit = await log.exited;
  const drainedMs = exit.at - signalled;

  // It exited by itself (no signal, exit 0), after the command (the log says none was cut short).
  expect(exit, log.output()).toMatchObject({ code: 0, signal: null });
  // The command had finished when it exited, and the session's container was left for the next worker.
  expect(readFileSync(ws('drain.txt'), 'utf8')).toBe('drained-once\n');
  const box = await docker.getContainer(containerName(sessionId)).inspect();
  expect(box.State.Running).toBe(true);
  // What it said: draining, what it waited for, and when it was done.
  expect(log.output()).toMatch(/worker draining: stopped polling task queue \S+; waiting up to 30 s for 1 activity in flight to finish: run_shell \([^)]*turn-1, call t1-s1-c0\)/);
  expect(log.output()).toMatch(/worker drained in \d+\.\d s: 1 activity finished, none cut short; sandbox containers are kept for the next worker/);

  const out = await waitForTurn(client, turnId, { pollMs: 200 });
  expect(out.kind).toBe('done');
  if (out.kind !== 'done') return;
  expect(out.result.answer).toBe('The command ran. HARNESS_OK');
  expect(out.result.toolCalls.map((c) => [c.name, c.ok])).toEqual([['run_shell', true]]);

  // Once: the line, the activity (one attempt, started and completed by the draining worker), each model step.
  expect(readFileSync(ws('drain.txt'), 'utf8')).toBe('drained-once\n');
  const h = await toolActivity(turnId);
  expect(h).toMatchObject({ scheduled: 1, attempts: [1], failed: 0, callModels: 2 });
  expect(h.startedBy[0]).toMatch(new RegExp(`^${first.pid}@`));
  expect(h.completedBy).toHaveLength(1);
  expect(h.completedBy[0]).toMatch(new RegExp(`^${first.pid}@`));
  // The turn went on on the second worker (the first one's sticky queue given up).
  expect(h.nextTaskBy).toMatch(new RegExp(`^${second.pid}@`));
  const calls = model.requests.filter((r) => r.session === sessionId && r.index !== null);
  expect(calls.map((r) => [r.index, r.status])).toEqual([
    [0, 200],
    [1, 200],
  ]);
  // The session's container is the same one the first worker made.
  expect((await docker.getContainer(containerName(sessionId)).inspect()).Id).toBe(box.Id);
  figure('drain', `SIGTERM to exit with a run_shell command 4 s from its end: ${drainedMs} ms; the turn's next workflow task started on the second worker ${h.nextTaskAfterMs} ms after the call completed\n${drainLines(log.output())}`);
}, 180_000);

it('a command longer than the grace: the worker exits at grace + margin, the call is retried on the second worker and follows the same command: the line is written once', async () => {
  const command = 'echo started > started.txt; sleep 14; echo long-once >> long.txt';
  const { env, sessionId, turnId, first, log, ws } = await startShellSession('drain-long', command, { HARNESS_DRAIN_GRACE_SEC: '2' });

  const signalled = Date.now();
  first.kill('SIGTERM');
  const second = await spawnWorker(env);
  workers.push(second);
  const exit = await log.exited;
  const stoppedMs = exit.at - signalled;
  expect(exit, log.output()).toMatchObject({ code: 0, signal: null });
  // It waited out the 2 s of grace, and left before the command's end (no long.txt, and the log
  // says the call did not end when cancelled).
  expect(stoppedMs).toBeGreaterThanOrEqual(2_000);
  expect(existsSync(ws('long.txt'))).toBe(false);
  expect(log.output()).toMatch(/worker draining: stopped polling task queue \S+; waiting up to 2 s for 1 activity in flight to finish: run_shell/);
  expect(log.output()).toMatch(/worker stopped \d+\.\d s into its drain: 1 activity did not end when cancelled after the 2 s grace \(run_shell [^)]*\)\); Temporal retries it on another worker/);
  expect((await docker.getContainer(containerName(sessionId)).inspect()).State.Running).toBe(true);

  const out = await waitForTurn(client, turnId, { pollMs: 200 });
  expect(out.kind).toBe('done');
  if (out.kind !== 'done') return;
  expect(out.result.answer).toBe('The command ran. HARNESS_OK');
  expect(readFileSync(ws('long.txt'), 'utf8')).toBe('long-once\n');
  const h = await toolActivity(turnId);
  // The first attempt timed out (its heartbeats stopped with the worker); the second completed on the new worker.
  expect(h.scheduled).toBe(1);
  expect(h.completedBy).toHaveLength(1);
  expect(h.completedBy[0]).toMatch(new RegExp(`^${second.pid}@`));
  figure('drain', `SIGTERM to exit with a run_shell command longer than a 2 s grace: ${stoppedMs} ms\n${drainLines(log.output())}`);
}, 180_000);

it('a bad tuning value: `harness worker` says which variable in one line and exits 2 before connecting', async () => {
  const home = mkdtempSync(path.join(os.tmpdir(), 'harness-drain-bad-'));
  homes.push(home);
  // An address nothing listens on: the check comes before any connection.
  const r = await runCli(['worker'], { env: cliEnv({ TEMPORAL_ADDRESS: '127.0.0.1:1', HARNESS_HOME: home, HARNESS_DRAIN_GRACE_SEC: '30s' }), timeoutMs: 30_000 });
  expect(r.code, r.stderr).toBe(2);
  expect(r.errLines).toEqual([
    'error: HARNESS_DRAIN_GRACE_SEC is "30s": give seconds, a number from 0 to 3600 (e.g. 30)',
    'hint: fix or unset it (docs/worker-tuning.md lists each setting and its default)',
  ]);
});
