/**
 * Every transient answer Temporal can give a waiting command, one test each: `run` (waiting on
 * its turn) and `status` (started meanwhile) keep waiting, print one line saying what they wait
 * for, and finish with the answer once the fault clears; `eval` likewise (`answer` with no worker
 * polling: answer-no-worker.test.ts). The CLI talks to the shared dev server
 * through a gRPC proxy that produces the fault (test/support/grpc-fault-proxy.ts); the worker
 * talks to the server directly, so the turn itself goes on. The real outages (a worker gone
 * for minutes, a server restart) are in test/durability/wait-outage.test.ts.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { startHarness, type TestHarness } from '../support/harness';
import { startFaultProxy, type FaultProxy } from '../support/grpc-fault-proxy';
import { modelCallRunning, watchCli } from '../support/watched-cli';
import { cliEnv, removeTempDirs, tempDir, writeScript } from '../support/cli';

let h: TestHarness;
let proxy: FaultProxy;
let dir: string;
let env: NodeJS.ProcessEnv;
const children: ChildProcess[] = [];

beforeAll(async () => {
  h = await startHarness();
  proxy = await startFaultProxy(h.address);
  dir = tempDir('harness-wait-faults-');
  env = cliEnv({ TEMPORAL_ADDRESS: proxy.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home') });
});
afterEach(async () => {
  await proxy.clear();
  for (const c of children.splice(0)) c.kill('SIGKILL');
});
afterAll(async () => {
  await proxy?.close();
  await h?.stop();
  removeTempDirs();
});

/** A CLI process through the proxy, killed after the test if still running. */
function watch(args: string[]) {
  const cli = watchCli(args, { env, cwd: dir });
  children.push(cli.child);
  return cli;
}

/** How long a wait may take to say what holds it up (a ceiling: the fault stays on until it has). */
const SAY_MS = 14_000;
/**
 * How long the fault stays on once every wait has said so: the waits try again meanwhile (after
 * 1 s, then 2 s), and must not say it again each time.
 */
const RETRIES_MS = 4_000;
/**
 * The model call's delay: the turn goes on through the fault, usually still in this call when the
 * fault clears. A wait that was slow to say so (RESOURCE_EXHAUSTED, after the SDK's own retries)
 * finds the turn done once it clears, and must print it all the same.
 */
const MODEL_MS = 14_000;

/**
 * Starts `run` on a slow model call, applies the fault once the call is in flight, starts
 * `status` meanwhile, and expects both to say `waiting: …` (matching `line`) in one line each;
 * keeps the fault on through their next tries, then clears it and expects run's answer and
 * status's state. A fault of the worker alone (`fromHistory`: what status prints instead) does
 * not hold status up: it answers from history at once.
 */
async function ridesOut(apply: () => void | Promise<void>, line: RegExp, runLine = line, fromHistory?: RegExp): Promise<void> {
  const script = writeScript(dir, { steps: [{ fault: { delay_ms: MODEL_MS }, content: 'Rode it out. HARNESS_OK' }] });
  const run = watch(['run', '--model', `scripted:${script}`, 'wait through a fault']);
  const sessionId = await modelCallRunning(h.address, () => run.out.stderr);
  await apply();
  const status = watch(['status', sessionId]);
  await run.until(runLine, SAY_MS);
  if (fromHistory) {
    await status.finished(60_000);
    expect(status.out.stdout, status.dump()).toMatch(new RegExp(`^session ${sessionId}: running$`, 'm'));
    expect(status.out.stdout, status.dump()).toMatch(fromHistory);
  } else await status.until(line, SAY_MS);
  await sleep(RETRIES_MS);
  await proxy.clear();

  await run.finished(90_000);
  expect(run.out.stdout, run.dump()).toContain('Rode it out. HARNESS_OK');
  // One line per problem: said once, not on every retry.
  expect(run.out.stderr.split('\n').filter((l) => l.startsWith('waiting: ')).length, run.dump()).toBeLessThanOrEqual(2);
  expect(run.out.stderr, run.dump()).toMatch(/^… (Temporal|a worker) answers again$/m);
  if (fromHistory) return;
  await status.finished(60_000);
  expect(status.out.stdout, status.dump()).toMatch(new RegExp(`^session ${sessionId}: (running|idle)$`, 'm'));
}

// gRPC status codes (DEADLINE_EXCEEDED comes from the clients' own deadlines: see `hold`).
const RESOURCE_EXHAUSTED = 8;
const FAILED_PRECONDITION = 9;
const UNAVAILABLE = 14;

it('UNAVAILABLE: says Temporal is unreachable, keeps waiting, and prints the answer', async () => {
  const unreachable = /^waiting: Temporal at 127\.0\.0\.1:\d+ is unreachable \(.+\); retrying$/m;
  // `status` starts once the fault is on and meets it on its first call. `run`'s call in flight
  // when the fault began may time out first on a loaded machine (seen in the full suite), and
  // its reworded line would come only after the fault is gone: either line is true for `run`.
  const runLine = /^waiting: Temporal at 127\.0\.0\.1:\d+ (is unreachable \(.+\)|did not answer within \d+ s); retrying$/m;
  await ridesOut(() => proxy.fail(UNAVAILABLE, 'upstream connect error or disconnect/reset before headers'), unreachable, runLine);
}, 150_000);

it('RESOURCE_EXHAUSTED: says Temporal is overloaded (the SDK retries it silently; the line names it all the same)', async () => {
  await ridesOut(() => proxy.fail(RESOURCE_EXHAUSTED, 'namespace rate limit exceeded'), /^waiting: Temporal at 127\.0\.0\.1:\d+ is overloaded \(namespace rate limit exceeded\); retrying$/m);
}, 150_000);

it('DEADLINE_EXCEEDED: a server that takes calls and answers none; the wait says Temporal did not answer', async () => {
  await ridesOut(() => proxy.hold(), /^waiting: Temporal at 127\.0\.0\.1:\d+ did not answer within \d+ s; retrying$/m);
}, 150_000);

it('FAILED_PRECONDITION (no poller seen): says no worker polls the task queue, naming it', async () => {
  // Temporal's own words when a query found no worker; the real thing (a worker gone) is in the durability test.
  const noWorker = `no worker polls task queue ${h.taskQueue} on Temporal at 127\\.0\\.0\\.1:\\d+`;
  await ridesOut(
    () => proxy.fail(FAILED_PRECONDITION, 'no poller seen for task queue recently, worker may be down', /QueryWorkflow$/),
    new RegExp(`^waiting: ${noWorker} .*; retrying$`, 'm'),
    undefined,
    new RegExp(`^\\(${noWorker}.* — shown from history; `, 'm'),
  );
}, 150_000);

it('a restarting server (connections dropped and refused): says Temporal is unreachable, and recovers', async () => {
  await ridesOut(() => proxy.down(), /^waiting: Temporal at 127\.0\.0\.1:\d+ is unreachable \(connection refused\); retrying$/m);
}, 150_000);

it('eval: following an eval rides out the same way (UNAVAILABLE), and prints the report', async () => {
  const suite = path.join(dir, 'slow.jsonl');
  const slowHello = { id: 'slow-hello', input: 'Say hello.', model_script: { steps: [{ fault: { delay_ms: MODEL_MS }, content: 'hello' }] }, checks: [{ type: 'contains', value: 'hello' }] };
  writeFileSync(suite, `${JSON.stringify(slowHello)}\n`);
  const ev = watch(['eval', suite, '--out', path.join(dir, 'slow-report.json')]);
  await ev.until(/^eval \S+: 1 cases from /m, 60_000);
  proxy.fail(UNAVAILABLE, 'upstream connect error or disconnect/reset before headers');
  await ev.until(/^waiting: Temporal at 127\.0\.0\.1:\d+ is unreachable \(.+\); retrying$/m, SAY_MS);
  await sleep(RETRIES_MS);
  await proxy.clear();
  await ev.finished(90_000);
  expect(ev.out.stdout, ev.dump()).toMatch(/^\| slow-hello \| pass \| 1\/1 \|/m);
  expect(ev.out.stderr, ev.dump()).toMatch(/^… Temporal answers again$/m);
}, 150_000);
