/**
 * bench:mcp — what an MCP tool call costs per ReAct step. A 50-step turn whose every step calls
 * server-everything's `echo` runs durably on a real Temporal dev server, over stdio and over
 * Streamable HTTP; the same turn calling built-in tools is the baseline of the same run:
 * get_current_time (a local activity) and recall (a regular activity on the embedded PGlite),
 * so an activity round trip can be told from MCP itself. Every session has the same config
 * (both servers), so model requests are alike and only the tool path differs. Also measured:
 * a direct SDK call on a connected pool (no Temporal), the cold first call of a fresh pool, and
 * how many server processes the whole durable run spawned (target: one).
 * Per-step time = from one model call's scheduling to the next, read from history. `echo` is
 * marked idempotent by its server, so its calls run as local activities (workflows/turn/tools.ts).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { NativeConnection } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { McpPool } from '../activities/mcp/pool';
import type { McpServerSpec } from '../deterministic/mcp';
import type { SessionConfig } from '../deterministic/session-config';
import { resolveSessionConfig } from '../config/resolve';
import { workerDeclarations } from '../workers/declarations';
import { projectRoot } from '../machine/paths';
import { runScript, withScratchHarness } from '../scripts/scratch';
import { freePort } from '../scripts/free-port';
import { sendMessage } from '../client/session-client';
import { waitForTurn } from '../client/turn-wait';
import { createHarnessWorker } from '../workers/worker';
import { fmt, median, percentile } from './stats';

const STEPS = 50;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const DIRECT_CALLS = 50; // per run and transport
const TARGET_MS = 5;
const EVERYTHING = path.join(projectRoot(), 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

type Variant = 'builtin' | 'recall' | 'stdio' | 'http';
const VARIANTS: Variant[] = ['builtin', 'recall', 'stdio', 'http'];
const LABEL: Record<Variant, string> = {
  builtin: 'built-in get_current_time (local activity)',
  recall: 'built-in recall (activity, PGlite)',
  stdio: 'MCP echo over stdio (local activity)',
  http: 'MCP echo over Streamable HTTP (local activity)',
};

/** The tool call of step i (messages vary so no two steps are the same call). */
function step(v: Variant, i: number): { name: string; arguments: Record<string, unknown> } {
  if (v === 'builtin') return { name: 'get_current_time', arguments: { timezone: i % 2 ? 'UTC' : 'Europe/Paris' } };
  if (v === 'recall') return { name: 'recall', arguments: { query: `bench query ${i}` } };
  return { name: `mcp__${v}__echo`, arguments: { message: `step ${i}` } };
}

/** Session configs made the way users make them: a config file with `mcpServers`, resolved. */
function configs(dir: string, spawnsFile: string, url: string): Record<Variant, SessionConfig> {
  const file = configFile(dir);
  const stdio = { command: '/bin/sh', args: ['-c', `echo x >> '${spawnsFile}'; exec '${process.execPath}' '${EVERYTHING}' stdio`], decision: 'allow' };
  writeFileSync(file, JSON.stringify({ mcpServers: { stdio, http: { url, decision: 'allow' } }, limits: { maxSteps: STEPS, repeatLimit: 1000 } }));
  const out = {} as Record<Variant, SessionConfig>;
  for (const v of VARIANTS) {
    const script = path.join(dir, `${v}.json`);
    const steps = [...Array.from({ length: STEPS - 1 }, (_, i) => ({ tool_calls: [step(v, i)] })), { content: 'done' }];
    writeFileSync(script, JSON.stringify({ steps }));
    out[v] = resolveSessionConfig({ config: file, model: `scripted:${script}`, policy: 'auto' }, {}, dir);
  }
  return out;
}

/** The benchmark's config file: it declares the worker's servers and shapes its sessions, as a user's does. */
function configFile(dir: string): string {
  return path.join(dir, 'harness.config.json');
}

/** Starts server-everything over Streamable HTTP on a free port; resolves once it listens. */
async function startHttpServer(): Promise<{ url: string; stop: () => void }> {
  const port = await freePort();
  const proc = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    proc.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      if (err.includes('listening on port')) resolve();
    });
    proc.once('exit', (code) => reject(new Error(`server-everything (streamableHttp) exited with ${code}: ${err}`)));
    setTimeout(() => reject(new Error(`server-everything did not listen within 30 s: ${err}`)), 30_000).unref();
  });
  return { url: `http://127.0.0.1:${port}/mcp`, stop: () => proc.kill('SIGTERM') };
}

/** Event time in ms. */
const ms = (e: { eventTime?: { seconds?: unknown; nanos?: number | null } | null }) => Number(e.eventTime!.seconds) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6;

/**
 * One durable turn, checked to have run every step with every tool call ok: the gaps between
 * its model calls, and for tools run as regular activities, each executeTool's time from
 * scheduled to completed (server clock: dispatch, the worker's run, the result's way back).
 */
async function durableTurn(client: Client, taskQueue: string, config: SessionConfig): Promise<{ gaps: number[]; trip: number[] }> {
  const sessionId = `bench-mcp-${randomUUID().slice(0, 8)}`;
  const { turnId } = await sendMessage(client, { taskQueue, sessionId, config, text: 'go' });
  const out = await waitForTurn(client, turnId, { pollMs: 20 });
  if (out.kind !== 'done' || out.result.steps !== STEPS) throw new Error(`bench turn did not run ${STEPS} steps: ${JSON.stringify(out).slice(0, 2000)}`);
  const failed = out.result.toolCalls.find((c) => !c.ok);
  if (failed) throw new Error(`tool call failed: ${JSON.stringify(failed)}`);
  const events = (await client.workflow.getHandle(turnId).fetchHistory()).events!;
  const starts = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel').map(ms);
  const byId = new Map(events.map((e) => [String(e.eventId), e]));
  const trip: number[] = [];
  for (const e of events) {
    const done = e.activityTaskCompletedEventAttributes;
    const scheduled = done && byId.get(String(done.scheduledEventId));
    if (scheduled?.activityTaskScheduledEventAttributes?.activityType?.name !== 'executeTool') continue;
    trip.push(ms(e) - ms(scheduled));
  }
  return { gaps: starts.slice(1).map((t, i) => t - starts[i]!), trip };
}

const echo = (pool: McpPool, spec: McpServerSpec, i: number) => pool.callTool(spec, 'echo', { message: `direct ${i}` }, { scope: { sessionId: 'bench' }, timeoutMs: 30_000 });

/** A pool with nothing open: spawn (or connect) + initialize + one call. */
async function coldCall(spec: McpServerSpec): Promise<number> {
  const pool = new McpPool({ env: {} });
  const t0 = performance.now();
  await echo(pool, spec, 0);
  const elapsed = performance.now() - t0;
  await pool.closeAll();
  return elapsed;
}

/** Calls on an already-connected pool, in-process, no Temporal. */
async function directCalls(pool: McpPool, spec: McpServerSpec): Promise<number[]> {
  await echo(pool, spec, -1); // connected before timing
  const out: number[] = [];
  for (let i = 0; i < DIRECT_CALLS; i++) {
    const t0 = performance.now();
    await echo(pool, spec, i);
    out.push(performance.now() - t0);
  }
  return out;
}

const summary = (xs: number[]) => ({ median: Number(fmt(median(xs))), p95: Number(fmt(percentile(xs, 95))), n: xs.length });

async function main(): Promise<void> {
  const loadStart = os.loadavg();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-mcp-'));
  const spawnsFile = path.join(dir, 'spawns.txt');
  const http = await startHttpServer();
  const cfg = configs(dir, spawnsFile, http.url);
  const declarations = workerDeclarations({}, dir, { config: configFile(dir) });
  const plain = (t: 'stdio' | 'http'): McpServerSpec => ({
    ...declarations.mcpServer(cfg.stdio.mcp!.servers.find((s) => s.name === t)!),
    ...(t === 'stdio' ? { command: process.execPath, args: [EVERYTHING, 'stdio'] } : {}),
  });
  const direct = new McpPool({ env: {} });
  const perVariant = () => ({ builtin: [], recall: [], stdio: [], http: [] }) as Record<Variant, number[]>;
  const durable = perVariant();
  const trip = perVariant();
  const sdk = { stdio: [] as number[], http: [] as number[] };
  const cold = { stdio: [] as number[], http: [] as number[] };
  // The benchmark's own worker (own queue and home), so its MCP pool can be counted and closed.
  const pool = new McpPool({ env: {} });
  let poolStats: ReturnType<McpPool['stats']> = [];
  try {
    await withScratchHarness('bench-mcp', async ({ client, address }) => {
      const connection = await NativeConnection.connect({ address });
      const taskQueue = `bench-mcp-${randomUUID()}`;
      const home = mkdtempSync(path.join(dir, 'home-'));
      const worker = await createHarnessWorker({ connection, namespace: 'default', taskQueue, home, env: {}, mcp: pool, declarations });
      try {
        await worker.runUntil(async () => {
          for (let run = 0; run < RUNS + 1; run++) {
            // Run 0 warms up (bundle caches, the store, the first spawn); each run rotates the order.
            const measured = run > 0;
            for (let k = 0; k < VARIANTS.length; k++) {
              const v = VARIANTS[(k + run) % VARIANTS.length]!;
              const t = await durableTurn(client, taskQueue, cfg[v]);
              if (!measured) continue;
              durable[v].push(...t.gaps);
              trip[v].push(...t.trip);
            }
            for (const t of ['stdio', 'http'] as const) {
              const c = await coldCall(plain(t));
              const d = await directCalls(direct, plain(t));
              if (!measured) continue;
              cold[t].push(c);
              sdk[t].push(...d);
            }
          }
          poolStats = pool.stats();
        });
      } finally {
        await pool.closeAll();
        await connection.close();
      }
    });
  } finally {
    await direct.closeAll();
    http.stop();
  }
  const spawns = existsSync(spawnsFile) ? readFileSync(spawnsFile, 'utf8').split('\n').filter(Boolean).length : 0;
  rmSync(dir, { recursive: true, force: true });
  report({ durable, trip, sdk, cold, spawns, poolStats, loadStart });
}

function report(r: {
  durable: Record<Variant, number[]>;
  trip: Record<Variant, number[]>;
  sdk: Record<'stdio' | 'http', number[]>;
  cold: Record<'stdio' | 'http', number[]>;
  spawns: number;
  poolStats: ReturnType<McpPool['stats']>;
  loadStart: number[];
}): void {
  const load = os.loadavg();
  const nproc = os.availableParallelism();
  const row = (label: string, xs: number[], unit: string) => console.log(`  ${label.padEnd(48)} ${fmt(median(xs)).padStart(8)} ${fmt(percentile(xs, 95)).padStart(8)}  ${unit} (n=${xs.length})`);
  console.log(`bench:mcp — ${STEPS}-step turns, ${RUNS} measured runs per variant (after one warm-up), nproc ${nproc}, load ${load.map((l) => fmt(l)).join(' ')} (at start ${r.loadStart.map((l) => fmt(l)).join(' ')})`);
  console.log(`  ${''.padEnd(48)} ${'median'.padStart(8)} ${'p95'.padStart(8)}`);
  for (const v of VARIANTS) row(LABEL[v], r.durable[v], 'ms/step');
  for (const t of ['stdio', 'http'] as const) row(`direct SDK call, ${t} (connected, no Temporal)`, r.sdk[t], 'ms/call');
  row('cold first call, stdio (spawn + init + call)', r.cold.stdio, 'ms');
  row('cold first call, http (connect + init + call)', r.cold.http, 'ms');
  // MCP calls of idempotent tools (echo) run as local activities: no activity events to time.
  for (const v of ['recall', 'stdio', 'http'] as const) if (r.trip[v].length) row(`${v} tool activity, scheduled→completed`, r.trip[v], 'ms');
  const base = median(r.durable.builtin);
  const act = median(r.durable.recall);
  const diffs = Object.fromEntries(
    (['stdio', 'http'] as const).map((t) => {
      const m = median(r.durable[t]);
      return [t, { minusBuiltinMs: Number(fmt(m - base)), ratio: Number(fmt(m / base)), minusRecallMs: Number(fmt(m - act)) }];
    }),
  );
  for (const [t, d] of Object.entries(diffs)) {
    const ok = d.minusBuiltinMs <= TARGET_MS ? 'within' : 'over';
    console.log(`  MCP ${t} − built-in: ${fmt(d.minusBuiltinMs)} ms/step (${ok} the ${TARGET_MS} ms target), ratio ${fmt(d.ratio)}x; MCP ${t} − recall activity: ${fmt(d.minusRecallMs)} ms/step`);
  }
  console.log(`  activity round trip (recall − get_current_time): ${fmt(act - base)} ms/step`);
  console.log(`  stdio server processes spawned for the whole durable run: ${r.spawns} (target 1)`);
  for (const s of r.poolStats) console.log(`  worker pool: ${s.server} spawns=${s.spawns} calls=${s.calls} connected=${s.connected}`);
  const json = {
    bench: 'mcp', steps: STEPS, runs: RUNS, nproc, loadavg: load.map((l) => Number(fmt(l))), loadavgStart: r.loadStart.map((l) => Number(fmt(l))),
    durableMsPerStep: Object.fromEntries(VARIANTS.map((v) => [v, summary(r.durable[v])])),
    directSdkMsPerCall: { stdio: summary(r.sdk.stdio), http: summary(r.sdk.http) },
    toolActivityMs: Object.fromEntries((['recall', 'stdio', 'http'] as const).map((v) => [v, summary(r.trip[v])])),
    coldFirstCallMs: { stdio: summary(r.cold.stdio), http: summary(r.cold.http) },
    diffs, activityRoundTripMs: Number(fmt(act - base)), stdioSpawns: r.spawns,
    pool: r.poolStats.map(({ server, spawns, calls }) => ({ server, spawns, calls })),
  };
  console.log(JSON.stringify(json));
}

runScript(main);
