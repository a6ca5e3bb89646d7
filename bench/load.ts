/**
 * bench:load — N concurrent sessions on the embedded dev server, served by one worker process
 * and by two (`harness worker` processes on one task queue, one HARNESS_HOME, the message store
 * in Postgres). Each session runs one turn of BENCH_STEPS steps (default 10): the scripted model
 * answers every request after 200 ms with a `run_shell` call (`echo <step>`, in the session's
 * real Docker sandbox), then with the answer. All N turns start at once.
 *
 * Per configuration: turns per second (N over the wall time until every turn is done), the step
 * overhead beyond the scripted 200 ms (per step, one callModel's scheduling to the next, read
 * from each turn's history; the first step includes the container's cold start, so warm steps
 * are shown too), activity schedule-to-start (ActivityTaskStarted − ActivityTaskScheduled), the
 * workers' peak RSS (VmRSS every 500 ms), failures (turns not ending `final_answer`, errors,
 * timeouts), and where a step's time goes: schedule-to-start and run time of each activity type
 * and of the turn's workflow tasks (the activities' runs split by what they timed themselves: the
 * model exchange, the command's exec), and the CPU each part of the machine used (the workers,
 * the dev server, Docker with runc and the containers' commands, Postgres, the rest), from /proc.
 * The dev server dispatches activities eagerly (with the completion of the workflow task that
 * scheduled them), so most schedule-to-start times are 0 by construction: their wait for the
 * worker is inside their run time.
 *
 * Targets: 100 concurrent sessions with zero failed turns; p95 step overhead ≤ 150 ms at 50.
 * Environment: BENCH_N (default 10,50,100), BENCH_WORKERS (1,2), BENCH_STEPS (10),
 * BENCH_TIMEOUT_MIN (10, per configuration), DATABASE_URL (postgres://postgres@127.0.0.1:5432/test).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Docker from 'dockerode';
import { Client, Connection } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { type TurnResult } from '../deterministic/session';
import { DEFAULT_LIMITS, type SessionConfig } from '../deterministic/session-config';
import { freezePolicy } from '../deterministic/policy';
import { parsePolicy } from '../deterministic/policy/schema';
import { LABELS } from '../activities/sandbox/containers';
import { sendMessage } from '../client/session-client';
import { endAndPurge } from '../client/retention';
import { embeddedFiles } from '../client/embedded';
import { spawnDevServer, waitForServer } from '../client/dev-server';
import { temporalSettings } from '../client/temporal-settings';
import { workflowRuns } from '../history/workflow-runs';
import { projectRoot } from '../machine/paths';
import { procStat, TICK_MS, type ProcStat } from './cpu';
import { freePort } from '../scripts/free-port';
import { fmt, median, percentile } from './stats';
import { stopChildProcess } from './child-stop';

const NS = (process.env.BENCH_N ?? '10,50,100').split(',').map(Number);
const WORKERS = (process.env.BENCH_WORKERS ?? '1,2').split(',').map(Number);
const STEPS = Number(process.env.BENCH_STEPS ?? 10);
const DELAY_MS = 200;
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MIN ?? 10) * 60_000;
const DATABASE_URL = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const WORKER_READY_MS = 120_000;
const TARGET_P95_MS = 150;
const TARGET_P95_AT = 50;
const TARGET_ZERO_FAILED_AT = 100;
const CLI = path.join(projectRoot(), 'bin', 'harness.js');

for (const [name, xs] of [['BENCH_N', NS], ['BENCH_WORKERS', WORKERS]] as const) {
  if (xs.some((x) => !Number.isInteger(x) || x < 1)) throw new Error(`${name} must be positive whole numbers separated by commas`);
}
if (!Number.isInteger(STEPS) || STEPS < 1) throw new Error('BENCH_STEPS must be a positive whole number');

// ---- what is started, for cleanup whatever happens ----

const children = new Set<ChildProcess>();
const homes = new Set<string>();

function killAll(signal: NodeJS.Signals): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill(signal);
}
process.on('exit', () => killAll('SIGKILL'));
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    console.error(`bench:load: ${sig}: stopping the workers and the dev server, removing the sandbox containers of ${homes.size} home(s)`);
    killAll('SIGKILL');
    void Promise.all([...homes].map((h) => removeContainers(h).catch(() => 0))).finally(() => {
      for (const h of homes) rmSync(h, { recursive: true, force: true });
      process.exit(130);
    });
  });
}

// ---- the session ----

const script = {
  steps: [
    ...Array.from({ length: STEPS }, (_, i) => ({ fault: { delay_ms: DELAY_MS }, tool_calls: [{ name: 'run_shell', arguments: { command: `echo ${i + 1}` } }] })),
    { fault: { delay_ms: DELAY_MS }, content: 'done' },
  ],
};

const config: SessionConfig = {
  model: { provider: 'scripted', model: 'scripted', script },
  systemPrompt: 'bench',
  limits: { ...DEFAULT_LIMITS, maxSteps: STEPS + 1, repeatLimit: 1000 },
  // Bench only: run_shell is allowed, nobody is asked.
  policy: freezePolicy(parsePolicy({ mode: 'auto', defaults: false })),
};

// ---- processes: /proc ----

function rssKiB(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Every process on the machine. */
function scanProcs(): Map<number, ProcStat> {
  const out = new Map<number, ProcStat>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const st = procStat(d); // undefined: gone meanwhile
    if (st) out.set(Number(d), st);
  }
  return out;
}

/** The machine's CPU time (ms, all cores) by kind, from /proc/stat. */
function machineCpu(): { busy: number; total: number; steal: number; irq: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  const [idle, iowait, irq, softirq, steal] = [f[3]!, f[4]!, f[5]!, f[6]!, f[7] ?? 0];
  return { busy: (total - idle - iowait - steal) * TICK_MS, total: total * TICK_MS, steal: steal * TICK_MS, irq: (irq + softirq) * TICK_MS };
}

interface CpuSnapshot {
  procs: Map<number, ProcStat>;
  machine: ReturnType<typeof machineCpu>;
}

function cpuSnapshot(): CpuSnapshot {
  return { procs: scanProcs(), machine: machineCpu() };
}

const DOCKER = /^(dockerd|containerd|containerd-shim.*|runc.*|docker-.*)$/;

/**
 * CPU seconds each part of the machine used between two snapshots. A process that began
 * meanwhile counts whole; one that ended meanwhile counts only where its parent reaped it and
 * the parent's children are counted: Docker's processes (a shim reaps `runc` and the commands
 * run in its container) and Postgres's postmaster (its backends). The rest of what ended, and
 * interrupts, are `unaccounted`.
 */
function cpuUsed(a: CpuSnapshot, b: CpuSnapshot, workers: number[], server: number) {
  const parts = { workers: 0, server: 0, docker: 0, postgres: 0, bench: 0, kernelThreads: 0, other: 0 };
  const others = new Map<string, number>();
  const underShim = (pid: number): boolean => {
    for (let p = b.procs.get(pid), hops = 0; p && hops < 20; p = b.procs.get(p.ppid), hops++) if (/^containerd-shim/.test(p.comm)) return true;
    return false;
  };
  for (const [pid, p] of b.procs) {
    const was = a.procs.get(pid);
    const same = was && was.start === p.start;
    const self = p.self - (same ? was.self : 0);
    const children = p.children - (same ? was.children : 0);
    if (workers.includes(pid)) parts.workers += self;
    else if (pid === server) parts.server += self;
    else if (pid === process.pid) parts.bench += self;
    else if (DOCKER.test(p.comm) || underShim(pid)) parts.docker += self + (/^containerd-shim/.test(p.comm) ? children : 0);
    else if (p.comm === 'postgres') parts.postgres += self + (b.procs.get(p.ppid)?.comm === 'postgres' ? 0 : children);
    else if (pid === 2 || p.ppid === 2) parts.kernelThreads += self;
    else {
      parts.other += self;
      if (self > 0) others.set(p.comm, (others.get(p.comm) ?? 0) + self);
    }
  }
  const busy = b.machine.busy - a.machine.busy;
  const attributed = Object.values(parts).reduce((x, y) => x + y, 0);
  const s = (ms: number) => Number(fmt(ms / 1000, 1));
  return {
    workersS: s(parts.workers),
    serverS: s(parts.server),
    dockerS: s(parts.docker),
    postgresS: s(parts.postgres),
    benchS: s(parts.bench),
    kernelThreadsS: s(parts.kernelThreads),
    otherS: s(parts.other),
    otherTop: [...others].sort((x, y) => y[1] - x[1]).slice(0, 3).map(([comm, v]) => `${comm} ${fmt(v / 1000, 1)}`),
    unaccountedS: s(busy - attributed),
    interruptsS: s(b.machine.irq - a.machine.irq),
    stealS: s(b.machine.steal - a.machine.steal),
    machineBusyPct: Number(fmt((100 * busy) / (b.machine.total - a.machine.total), 0)),
  };
}

// ---- workers ----

interface Worker {
  child: ChildProcess;
  pid: number;
  log: string[];
}

function workerEnv(address: string, taskQueue: string, home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(TEMPORAL_|HARNESS_|OTEL_|OPENAI_)/.test(k) || k === 'DATABASE_URL') delete env[k];
  // The drain grace bounds only the stop after the measurement (nothing is in flight then).
  return { ...env, TEMPORAL_ADDRESS: address, HARNESS_TASK_QUEUE: taskQueue, HARNESS_HOME: home, DATABASE_URL, HARNESS_DRAIN_GRACE_SEC: '5' };
}

/** Starts `harness worker` as its own process; resolves once it says `worker ready`. */
async function startWorker(env: NodeJS.ProcessEnv, name: string): Promise<Worker> {
  const child = spawn(process.execPath, [CLI, 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const w: Worker = { child, pid: child.pid!, log: [] };
  let buf = '';
  const onData = (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split('\n');
    buf = lines.pop()!;
    for (const l of lines) {
      w.log.push(l);
      if (w.log.length > 500) w.log.splice(0, 100);
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const deadline = Date.now() + WORKER_READY_MS;
  while (!w.log.some((l) => l.includes('worker ready'))) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${w.log.join('\n')}`);
    if (Date.now() > deadline) throw new Error(`${name} was not ready within ${WORKER_READY_MS / 1000} s:\n${w.log.join('\n')}`);
    await sleep(100);
  }
  const sandbox = w.log.find((l) => l.startsWith('sandbox:') && l.includes('SANDBOX_UNAVAILABLE'));
  if (sandbox) throw new Error(`${name}: ${sandbox} — the bench needs the real Docker sandbox (npm run setup)`);
  return w;
}

async function stopWorker(w: Worker): Promise<void> {
  await stopChildProcess(w.child);
  children.delete(w.child);
}

// ---- the sandbox containers of a home ----

const docker = new Docker();

async function removeContainers(home: string): Promise<number> {
  const list = await docker.listContainers({ all: true, filters: { label: [`${LABELS.managed}=true`, `${LABELS.home}=${path.resolve(home)}`] } });
  await Promise.all(list.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
  return list.length;
}

// ---- small helpers ----

/** Runs `fn` over the items, at most `limit` at a time. */
async function pool<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

/** `p`, or a rejection saying what did not finish within `ms`. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  const stop = new AbortController();
  return Promise.race([
    p.finally(() => stop.abort()),
    sleep(ms, undefined, { signal: stop.signal }).then(
      () => Promise.reject(new Error(`${what}: not done within ${fmt(ms / 1000, 0)} s`)),
      () => new Promise<never>(() => undefined),
    ),
  ]);
}

/** A JSON payload's value (the default data converter; no codec), or undefined. */
function payloadJson(p: { data?: Uint8Array | null } | null | undefined): unknown {
  try {
    return p?.data ? JSON.parse(Buffer.from(p.data).toString('utf8')) : undefined;
  } catch {
    return undefined;
  }
}

const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined): number => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
const stats = (xs: number[]) => ({ p50: Number(fmt(median(xs), 1)), p95: Number(fmt(percentile(xs, 95), 1)), n: xs.length });

// ---- one turn's history ----

interface Span {
  label: string;
  from: number;
  to: number;
}

interface TurnTimes {
  /** Step overhead beyond the scripted delay, by step (index 0: the first, with the container's cold start). */
  steps: number[];
  /** Activity schedule-to-start, with the type. */
  s2s: { type: string; ms: number; attempt: number }[];
  /** Workflow task schedule-to-start and run time. */
  wftS2s: number[];
  wftRun: number[];
  /** Time of each kind spent within the turn's step intervals (ms, summed). */
  parts: Map<string, number>;
  intervalMs: number;
}

function turnTimes(histories: History[]): TurnTimes {
  const scheduled = new Map<number, { type: string; at: number }>();
  const started = new Map<number, number>();
  const wftScheduled = new Map<number, number>();
  const wftStarted = new Map<number, number>();
  const spans: Span[] = [];
  const out: TurnTimes = { steps: [], s2s: [], wftS2s: [], wftRun: [], parts: new Map(), intervalMs: 0 };
  const modelStarts: number[] = [];
  // Event ids restart with each run: keys are per run (its index among the histories).
  let run = 0;
  for (const h of histories) {
    run++;
    for (const e of h.events ?? []) {
      const at = ms(e.eventTime);
      const id = run * 1e7 + Number(e.eventId);
      const ref = (n: unknown) => run * 1e7 + Number(n);
      if (e.activityTaskScheduledEventAttributes) {
        const type = e.activityTaskScheduledEventAttributes.activityType?.name ?? '?';
        scheduled.set(id, { type, at });
        if (type === 'callModel') modelStarts.push(at);
      } else if (e.activityTaskStartedEventAttributes) {
        const a = e.activityTaskStartedEventAttributes;
        const s = scheduled.get(ref(a.scheduledEventId));
        if (s) {
          started.set(ref(a.scheduledEventId), at);
          out.s2s.push({ type: s.type, ms: at - s.at, attempt: a.attempt ?? 1 });
          spans.push({ label: `${s.type} schedule-to-start`, from: s.at, to: at });
        }
      } else {
        const closed =
          e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes ?? e.activityTaskCanceledEventAttributes;
        if (closed && closed.scheduledEventId !== undefined) {
          const s = scheduled.get(ref(closed.scheduledEventId));
          const st = started.get(ref(closed.scheduledEventId));
          if (s && st !== undefined) {
            // What the activity measured itself: the model call's exchange, the command's exec.
            const value = payloadJson(e.activityTaskCompletedEventAttributes?.result?.payloads?.[0]) as
              | { latencyMs?: number; result?: { duration_ms?: number } }
              | undefined;
            const inner = s.type === 'callModel' ? value?.latencyMs : s.type === 'executeTool' ? value?.result?.duration_ms : undefined;
            if (typeof inner === 'number' && inner >= 0 && inner <= at - st) {
              const innerLabel = s.type === 'callModel' ? 'model exchange' : 'command exec';
              spans.push({ label: `${s.type}: rest`, from: st, to: at - inner }, { label: innerLabel, from: at - inner, to: at });
            } else spans.push({ label: `${s.type} run`, from: st, to: at });
          }
        } else if (e.workflowTaskScheduledEventAttributes) {
          wftScheduled.set(id, at);
        } else if (e.workflowTaskStartedEventAttributes) {
          const sid = ref(e.workflowTaskStartedEventAttributes.scheduledEventId);
          const s = wftScheduled.get(sid);
          if (s !== undefined) {
            wftStarted.set(sid, at);
            out.wftS2s.push(at - s);
            spans.push({ label: 'workflow task schedule-to-start', from: s, to: at });
          }
        } else if (e.workflowTaskCompletedEventAttributes ?? e.workflowTaskFailedEventAttributes ?? e.workflowTaskTimedOutEventAttributes) {
          const c = e.workflowTaskCompletedEventAttributes ?? e.workflowTaskFailedEventAttributes ?? e.workflowTaskTimedOutEventAttributes;
          const st = wftStarted.get(ref(c!.scheduledEventId));
          if (st !== undefined) {
            out.wftRun.push(at - st);
            spans.push({ label: 'workflow task run', from: st, to: at });
          }
        }
      }
    }
  }
  modelStarts.sort((a, b) => a - b);
  for (let i = 1; i < modelStarts.length; i++) {
    const [a, b] = [modelStarts[i - 1]!, modelStarts[i]!];
    out.steps.push(b - a - DELAY_MS);
    out.intervalMs += b - a;
    let covered = 0;
    const here = new Map<string, number>();
    for (const s of spans) {
      const overlap = Math.min(b, s.to) - Math.max(a, s.from);
      if (overlap <= 0) continue;
      covered += overlap;
      here.set(s.label, (here.get(s.label) ?? 0) + overlap);
    }
    here.set('other', b - a - covered);
    // The parts add up to the step's overhead: the scripted delay is taken off the model's part.
    const model = here.has('model exchange') ? 'model exchange' : 'callModel run';
    here.set(model, (here.get(model) ?? 0) - DELAY_MS);
    for (const [k, v] of here) out.parts.set(k, (out.parts.get(k) ?? 0) + v);
  }
  return out;
}

// ---- one configuration ----

interface ConfigResult {
  sessions: number;
  workers: number;
  wallS: number;
  turnsPerS: number;
  turnS: { p50: number; p95: number };
  stepOverheadMs: { p50: number; p95: number; n: number };
  warmStepOverheadMs: { p50: number; p95: number; n: number };
  firstStepOverheadMs: { p50: number; p95: number; n: number };
  activityS2sMs: { p50: number; p95: number; n: number };
  s2sByTypeMs: Record<string, { p50: number; p95: number; n: number }>;
  workflowTaskS2sMs: { p50: number; p95: number; n: number };
  workflowTaskRunMs: { p50: number; p95: number; n: number };
  retriedActivities: number;
  /** Activities started within 1 ms of being scheduled: handed to the worker with its workflow task's completion (eager dispatch). */
  eagerSharePct: number;
  perStepMs: Record<string, number>;
  workerRssMiB: { maxPerWorker: number[]; maxTotal: number };
  cpu: ReturnType<typeof cpuUsed>;
  failed: number;
  failures: Record<string, number>;
  toolErrors: Record<string, number>;
  workerLogLines: string[];
  loadavgEnd: number[];
}

interface Outcome {
  sessionId: string;
  turnId?: string;
  doneMs?: number;
  result?: TurnResult;
  error?: string;
}

async function runSessions(client: Client, taskQueue: string, ids: string[], timeoutMs: number, t0: number): Promise<Outcome[]> {
  return Promise.all(
    ids.map(async (sessionId): Promise<Outcome> => {
      const o: Outcome = { sessionId };
      try {
        await within(
          (async () => {
            const { turnId } = await sendMessage(client, { taskQueue, sessionId, config, text: 'go' });
            o.turnId = turnId;
            o.result = (await client.workflow.getHandle(turnId).result()) as TurnResult;
            o.doneMs = performance.now() - t0;
          })(),
          timeoutMs,
          `session ${sessionId}`,
        );
      } catch (err) {
        o.error = String((err as Error)?.message ?? err).split('\n')[0]!.slice(0, 300);
      }
      return o;
    }),
  );
}

/** Ends and purges the sessions (as `harness end --purge`); a session whose turn still runs is terminated first. */
async function endSessions(client: Client, outcomes: Outcome[]): Promise<string[]> {
  const problems: string[] = [];
  await pool(outcomes, 8, async (o) => {
    try {
      if (!o.result && o.turnId) await client.workflow.getHandle(o.turnId).terminate('bench:load cleanup').catch(() => undefined);
      if (!o.result) await client.workflow.getHandle(o.sessionId).terminate('bench:load cleanup').catch(() => undefined);
      const r = await within(endAndPurge(client, o.sessionId, 'bench:load done'), 90_000, `ending ${o.sessionId}`);
      if (r.kind === 'ended' && r.purgeFailed) problems.push(`${o.sessionId}: purge failed: ${JSON.stringify(r.purgeFailed).slice(0, 200)}`);
      if (r.kind === 'pending' || r.kind === 'after-turn') problems.push(`${o.sessionId}: ${r.kind}`);
    } catch (err) {
      problems.push(`${o.sessionId}: ${String((err as Error).message).split('\n')[0]}`);
    }
  });
  return problems;
}

async function runConfig(client: Client, address: string, serverPid: number, n: number, w: number): Promise<ConfigResult> {
  const home = realpathSync(mkdtempSync(path.join(os.tmpdir(), `bench-load-n${n}-w${w}-`)));
  homes.add(home);
  const taskQueue = `bench-load-${randomUUID()}`;
  const env = workerEnv(address, taskQueue, home);
  const workers: Worker[] = [];
  const all: Outcome[] = [];
  const tag = `n${n}-w${w}`;
  try {
    for (let i = 0; i < w; i++) workers.push(await startWorker(env, `worker ${i + 1} of ${w}`));
    // Warm-up (not measured): code paths, the store, the scripted server, a first container.
    const warmIds = Array.from({ length: 2 * w }, (_, i) => `bl-${tag}-warm${i}-${randomUUID().slice(0, 6)}`);
    const warm = await runSessions(client, taskQueue, warmIds, 180_000, performance.now());
    all.push(...warm);
    const warmBad = warm.filter((o) => o.error || o.result?.terminated_by !== 'final_answer');
    if (warmBad.length) throw new Error(`warm-up: ${warmBad.length} of ${warm.length} sessions failed: ${warmBad.map((o) => o.error ?? o.result?.terminated_by).join('; ')}`);
    const logMark = workers.map((x) => x.log.length);
    await sleep(2_000);

    // The measurement: all N at once.
    const rss = new Map<number, number>(workers.map((x) => [x.pid, 0]));
    let rssTotal = 0;
    const sampler = setInterval(() => {
      let total = 0;
      for (const x of workers) {
        const kib = rssKiB(x.pid);
        total += kib;
        rss.set(x.pid, Math.max(rss.get(x.pid)!, kib));
      }
      rssTotal = Math.max(rssTotal, total);
    }, 500);
    const ids = Array.from({ length: n }, (_, i) => `bl-${tag}-${i}-${randomUUID().slice(0, 6)}`);
    const cpu0 = cpuSnapshot();
    const t0 = performance.now();
    const outcomes = await runSessions(client, taskQueue, ids, TIMEOUT_MS, t0);
    const wall = Math.max(...outcomes.map((o) => o.doneMs ?? performance.now() - t0));
    const cpu1 = cpuSnapshot();
    clearInterval(sampler);
    all.push(...outcomes);

    // Failures.
    const failures: Record<string, number> = {};
    const toolErrors: Record<string, number> = {};
    for (const o of outcomes) {
      const why = o.error ? (/not done within/.test(o.error) ? 'timeout' : `error: ${o.error}`) : o.result!.terminated_by !== 'final_answer' ? `terminated_by ${o.result!.terminated_by}` : undefined;
      if (why) failures[why] = (failures[why] ?? 0) + 1;
      for (const c of o.result?.toolCalls ?? []) if (!c.ok) toolErrors[c.error_type ?? 'error'] = (toolErrors[c.error_type ?? 'error'] ?? 0) + 1;
    }
    const failed = Object.values(failures).reduce((a, b) => a + b, 0);

    // Histories.
    const done = outcomes.filter((o) => o.result && o.turnId);
    const times = await pool(done, 8, async (o) => turnTimes((await workflowRuns(client, o.turnId!)).map((r) => r.history)));
    const steps = times.flatMap((t) => t.steps);
    const first = times.flatMap((t) => t.steps.slice(0, 1));
    const warmSteps = times.flatMap((t) => t.steps.slice(1));
    const s2s = times.flatMap((t) => t.s2s);
    const byType: Record<string, number[]> = {};
    for (const s of s2s) (byType[s.type] ??= []).push(s.ms);
    const parts = new Map<string, number>();
    for (const t of times) for (const [k, v] of t.parts) parts.set(k, (parts.get(k) ?? 0) + v);
    const stepCount = steps.length;
    const perStepMs = Object.fromEntries([...parts].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Number(fmt(v / stepCount, 1))]));
    const turnDurations = done.map((o) => o.doneMs! / 1000);

    const newLines = workers.flatMap((x, i) => x.log.slice(logMark[i]).map((l) => `worker ${i + 1}: ${l}`));
    return {
      sessions: n,
      workers: w,
      wallS: Number(fmt(wall / 1000, 2)),
      turnsPerS: Number(fmt(n / (wall / 1000), 2)),
      turnS: { p50: Number(fmt(median(turnDurations), 2)), p95: Number(fmt(percentile(turnDurations, 95), 2)) },
      stepOverheadMs: stats(steps),
      warmStepOverheadMs: stats(warmSteps),
      firstStepOverheadMs: stats(first),
      activityS2sMs: stats(s2s.map((s) => s.ms)),
      s2sByTypeMs: Object.fromEntries(Object.entries(byType).map(([k, v]) => [k, stats(v)])),
      workflowTaskS2sMs: stats(times.flatMap((t) => t.wftS2s)),
      workflowTaskRunMs: stats(times.flatMap((t) => t.wftRun)),
      retriedActivities: s2s.filter((s) => s.attempt > 1).length,
      eagerSharePct: Number(fmt((100 * s2s.filter((s) => s.ms < 1).length) / s2s.length, 0)),
      perStepMs,
      workerRssMiB: { maxPerWorker: workers.map((x) => Number(fmt(rss.get(x.pid)! / 1024, 0))), maxTotal: Number(fmt(rssTotal / 1024, 0)) },
      cpu: cpuUsed(cpu0, cpu1, workers.map((x) => x.pid), serverPid),
      failed,
      failures,
      toolErrors,
      workerLogLines: newLines.slice(0, 20),
      loadavgEnd: os.loadavg().map((l) => Number(fmt(l))),
    };
  } finally {
    const problems = await endSessions(client, all);
    if (problems.length) console.error(`  ${tag}: cleanup: ${problems.length} session(s) not ended cleanly: ${problems.slice(0, 5).join('; ')}`);
    for (const x of workers) await stopWorker(x);
    const removed = await removeContainers(home).catch((err: Error) => {
      console.error(`  ${tag}: could not remove the sandbox containers of ${home}: ${err.message}`);
      return 0;
    });
    if (removed) console.error(`  ${tag}: removed ${removed} sandbox container(s) left after the sessions ended`);
    rmSync(home, { recursive: true, force: true });
    homes.delete(home);
  }
}

// ---- report ----

function row(r: ConfigResult): string {
  const cols = [
    `${String(r.sessions).padStart(4)} × ${r.workers}w`,
    fmt(r.turnsPerS).padStart(7),
    fmt(r.wallS, 1).padStart(7),
    `${fmt(r.stepOverheadMs.p50, 0)} / ${fmt(r.stepOverheadMs.p95, 0)}`.padStart(13),
    `${fmt(r.warmStepOverheadMs.p50, 0)} / ${fmt(r.warmStepOverheadMs.p95, 0)}`.padStart(13),
    `${fmt(r.activityS2sMs.p50, 0)} / ${fmt(r.activityS2sMs.p95, 0)}`.padStart(11),
    `${fmt(r.workflowTaskS2sMs.p50, 0)} / ${fmt(r.workflowTaskS2sMs.p95, 0)}`.padStart(13),
    `${r.workerRssMiB.maxPerWorker.join('+')}${r.workers > 1 ? ` (${r.workerRssMiB.maxTotal})` : ''}`.padStart(14),
    `${r.failed}/${r.sessions}`.padStart(8),
  ];
  return cols.join(' │ ');
}

async function main(): Promise<void> {
  const loadStart = os.loadavg();
  const nproc = os.availableParallelism();
  console.log(`bench:load — ${NS.join(', ')} concurrent sessions × ${WORKERS.join(', ')} worker(s); one turn of ${STEPS} run_shell steps + the answer, the scripted model answering after ${DELAY_MS} ms; nproc ${nproc}, load at start ${loadStart.map((l) => fmt(l)).join(' ')}`);
  if (loadStart[0]! > 1.5) console.log(`  note: the 1-minute load is ${fmt(loadStart[0]!)} at start (the build before the bench counts too): with something else running, figures are slower`);
  const serverHome = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'bench-load-server-')));
  homes.add(serverHome);
  const settings = temporalSettings({
    HARNESS_EMBEDDED_PORT: String(await freePort()),
    HARNESS_UI_PORT: String(await freePort()),
    HARNESS_HTTP_PORT: String(await freePort()),
    HARNESS_METRICS_PORT: String(await freePort()),
  });
  // Detached only to log to a file; it is stopped below, and on exit.
  const server = spawnDevServer(settings, serverHome, { detached: true });
  children.add(server);
  const results: ConfigResult[] = [];
  const failedConfigs: { sessions: number; workers: number; error: string }[] = [];
  let client: Client | undefined;
  try {
    await waitForServer(settings, embeddedFiles(serverHome).serverLog, 60_000, server);
    client = new Client({ connection: await Connection.connect({ address: settings.address }) });
    for (const n of NS) {
      for (const w of WORKERS) {
        const t = performance.now();
        try {
          const r = await runConfig(client, settings.address, server.pid!, n, w);
          results.push(r);
          console.log(
            `  ${n} sessions, ${w} worker(s): ${fmt(r.turnsPerS)} turns/s (${fmt(r.wallS, 1)} s), step overhead p50 ${fmt(r.stepOverheadMs.p50, 0)} / p95 ${fmt(r.stepOverheadMs.p95, 0)} ms, ` +
              `failed ${r.failed}${r.failed ? ` ${JSON.stringify(r.failures)}` : ''}${Object.keys(r.toolErrors).length ? `, tool errors ${JSON.stringify(r.toolErrors)}` : ''} — ${fmt((performance.now() - t) / 1000, 0)} s with setup and cleanup, load ${r.loadavgEnd.join(' ')}`,
          );
        } catch (err) {
          const error = String((err as Error)?.stack ?? err);
          failedConfigs.push({ sessions: n, workers: w, error: error.split('\n')[0]! });
          console.log(`  ${n} sessions, ${w} worker(s): FAILED: ${error}`);
        }
        await sleep(5_000); // let the machine settle (containers removed, workers gone)
      }
    }
  } finally {
    await client?.connection.close().catch(() => undefined);
    server.kill('SIGTERM');
    await Promise.race([new Promise((r) => server.once('exit', r)), sleep(10_000)]);
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    children.delete(server);
    rmSync(serverHome, { recursive: true, force: true });
    homes.delete(serverHome);
  }

  const loadEnd = os.loadavg();
  console.log('');
  console.log(`bench:load — nproc ${nproc}, load ${loadStart.map((l) => fmt(l)).join(' ')} at start, ${loadEnd.map((l) => fmt(l)).join(' ')} at end; ${STEPS} steps a turn, model ${DELAY_MS} ms a call`);
  console.log(['sessions', 'turns/s', 'wall s', 'step +ms p50/95', 'warm +ms p50/95', 's2s ms p50/95', 'wft s2s p50/95', 'RSS MiB (max)', 'failed'].map((h, i) => h.padStart([9, 7, 7, 13, 13, 11, 13, 14, 8][i]!)).join(' │ '));
  for (const r of results) console.log(row(r));
  console.log('  step +ms: per step, one model call scheduled to the next, less the scripted 200 ms (all steps; the first includes the sandbox container\'s cold start); warm: steps 2…; s2s: activity schedule-to-start; wft s2s: the turns\' workflow tasks\' schedule-to-start (ms)');
  for (const r of results) {
    const parts = Object.entries(r.perStepMs).map(([k, v]) => `${k} ${fmt(v, 1)}`).join(', ');
    const types = Object.entries(r.s2sByTypeMs).map(([k, v]) => `${k} ${fmt(v.p50, 0)}/${fmt(v.p95, 0)}`).join(', ');
    console.log(`  ${r.sessions} × ${r.workers}w — where a step's overhead goes (mean ms/step, adding up to ${fmt(Object.values(r.perStepMs).reduce((a, b) => a + b, 0), 1)}): ${parts}`);
    console.log(
      `      schedule-to-start p50/p95 ms by activity: ${types}; workflow tasks: schedule-to-start ${fmt(r.workflowTaskS2sMs.p50, 0)}/${fmt(r.workflowTaskS2sMs.p95, 0)}, run ${fmt(r.workflowTaskRunMs.p50, 0)}/${fmt(r.workflowTaskRunMs.p95, 0)}; ` +
        `${r.eagerSharePct}% of activities started within 1 ms (eager dispatch); first step +${fmt(r.firstStepOverheadMs.p50, 0)}/${fmt(r.firstStepOverheadMs.p95, 0)} ms; turn ${fmt(r.turnS.p50, 1)}/${fmt(r.turnS.p95, 1)} s; retried activities ${r.retriedActivities}`,
    );
    console.log(
      `      CPU s over the ${fmt(r.wallS, 1)} s: workers ${fmt(r.cpu.workersS, 1)}, dev server ${fmt(r.cpu.serverS, 1)}, Docker ${fmt(r.cpu.dockerS, 1)} (with runc and the containers' commands), Postgres ${fmt(r.cpu.postgresS, 1)}, ` +
        `bench ${fmt(r.cpu.benchS, 1)}, kernel threads ${fmt(r.cpu.kernelThreadsS, 1)}, other processes ${fmt(r.cpu.otherS, 1)}${r.cpu.otherTop.length ? ` (${r.cpu.otherTop.join(', ')})` : ''}, unaccounted ${fmt(r.cpu.unaccountedS, 1)} (of which interrupts ${fmt(r.cpu.interruptsS, 1)}); ` +
        `machine ${r.cpu.machineBusyPct}% busy, steal ${fmt(r.cpu.stealS, 1)}` +
        (r.workerLogLines.length ? `; worker log: ${r.workerLogLines.length} line(s), first: ${r.workerLogLines[0]!.slice(0, 200)}` : ''),
    );
  }
  console.log(
    '  legend: model exchange = the model call as callModel timed it (HTTP to the scripted server) beyond the 200 ms; callModel: rest = the rest of that activity (context read from the store, reply stored, waiting on the worker); ' +
      'command exec = run_shell\'s own duration_ms; executeTool: rest = the rest of that activity (policy, container check or cold start, exec create, records); workflow task = the turn\'s; ' +
      'other = between events. An activity handed over with its workflow task\'s completion (eager dispatch, on by default on the dev server) has a schedule-to-start of 0: any wait for the worker is in its run time',
  );
  for (const f of failedConfigs) console.log(`  ${f.sessions} × ${f.workers}w — FAILED: ${f.error}`);
  const at100 = results.filter((r) => r.sessions === TARGET_ZERO_FAILED_AT);
  const at50 = results.filter((r) => r.sessions === TARGET_P95_AT);
  const verdict = (rs: ConfigResult[], ok: (r: ConfigResult) => boolean, show: (r: ConfigResult) => string) =>
    rs.length ? rs.map((r) => `${r.workers}w ${show(r)} ${ok(r) ? 'met' : 'missed'}`).join(', ') : 'not run';
  console.log(
    `  targets: ${TARGET_ZERO_FAILED_AT} sessions with zero failed turns: ${verdict(at100, (r) => r.failed === 0, (r) => `${r.failed} failed`)}; ` +
      `p95 step overhead ≤ ${TARGET_P95_MS} ms at ${TARGET_P95_AT}: ${verdict(at50, (r) => r.stepOverheadMs.p95 <= TARGET_P95_MS, (r) => `${fmt(r.stepOverheadMs.p95, 0)} ms (warm ${fmt(r.warmStepOverheadMs.p95, 0)})`)}`,
  );
  console.log(
    JSON.stringify({
      bench: 'load',
      steps: STEPS,
      delayMs: DELAY_MS,
      nproc,
      loadavgStart: loadStart.map((l) => Number(fmt(l))),
      loadavgEnd: loadEnd.map((l) => Number(fmt(l))),
      targets: { zeroFailedAt: TARGET_ZERO_FAILED_AT, p95StepOverheadMs: TARGET_P95_MS, p95At: TARGET_P95_AT },
      results: results.map(({ workerLogLines: _l, ...r }) => r),
      failedConfigs,
    }),
  );
  if (failedConfigs.length) process.exitCode = 1;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
