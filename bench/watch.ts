/**
 * bench:watch — how long after a step's call completes (its end as history records it) a person
 * watching sees it: in the console (its Server-Sent Events stream, what the page draws from) and
 * in `harness status --follow`. Target: p95 under 300 ms on the embedded dev server. Measured in
 * the same run, as baselines: the floor (a bare history long poll in this process, no trace
 * rebuilt) and what `run` showed before (polling the turn's state query every 250 ms for `… step N`,
 * timed from the end of the step before). BENCH_RUNS turns (default 3) of BENCH_STEPS steps
 * (default 15), each step a model call and a tool call; medians and p95 per run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { get } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { projectRoot } from '../machine/paths';
import { freePort } from '../scripts/free-port';
import { HistoryFollower } from '../client/watch/follow';
import { fmt, median, percentile } from './stats';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const STEPS = Number(process.env.BENCH_STEPS ?? 15);
const TARGET_P95_MS = 300;
const CLI = path.join(projectRoot(), 'bin', 'harness.js');
const TOKEN = `bench-${Math.random().toString(36).slice(2)}-token`;

type Seen = { at: number; end: number };

function cli(env: NodeJS.ProcessEnv, args: string[], cwd: string): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
}

async function finish(child: ChildProcess): Promise<string> {
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`harness exited ${code}: ${err}`);
  return out;
}

/** Each closed model or tool span a line-based source reports: when it arrived, and when it ended. */
function spansOf(onLine: (f: (line: string) => void) => void, into: Map<string, Seen>): void {
  onLine((line) => {
    const text = line.startsWith('data: ') ? line.slice(6) : line;
    if (!text.startsWith('{')) return;
    const c = JSON.parse(text) as { change?: string; span?: { span_id: string; type: string; end: string | null } };
    if (c.change !== 'closed' || !c.span?.end || (c.span.type !== 'llm_call' && c.span.type !== 'tool_call')) return;
    if (!into.has(c.span.span_id)) into.set(c.span.span_id, { at: Date.now(), end: Date.parse(c.span.end) });
  });
}

function lines(stream: NodeJS.ReadableStream, f: (line: string) => void): void {
  let buf = '';
  stream.on('data', (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      f(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
}

const stats = (xs: number[]) => ({ median: Number(fmt(median(xs), 1)), p95: Number(fmt(percentile(xs, 95), 1)), n: xs.length });
const show = (name: string, s: ReturnType<typeof stats>) => `${name} median ${fmt(s.median, 0)} ms, p95 ${fmt(s.p95, 0)} ms (n=${s.n})`;

async function main(): Promise<void> {
  const loadStart = os.loadavg();
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'bench-watch-'));
  const port = await freePort();
  const uiPort = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(TEMPORAL_|HARNESS_|OTEL_|OPENAI_)/.test(k)) delete env[k];
  Object.assign(env, { HARNESS_HOME: path.join(scratch, 'home'), HARNESS_EMBEDDED_PORT: String(port), HARNESS_UI_PORT: String(uiPort), HARNESS_CONSOLE_TOKEN: TOKEN });
  // Each step asks another zone: the same call again and again would end the turn (repeated_action).
  const zones = ['UTC', 'Europe/Paris', 'Asia/Tokyo', 'America/New_York', 'Australia/Sydney', 'Africa/Cairo', 'Asia/Kolkata', 'Europe/London', 'America/Sao_Paulo', 'Pacific/Auckland'];
  const step = (i: number) => ({ fault: { delay_ms: 100 }, tool_calls: [{ name: 'get_current_time', arguments: { timezone: zones[i % zones.length] }, id: `c${i}` }] });
  writeFileSync(path.join(scratch, 'hello.json'), JSON.stringify({ steps: [{ content: 'hello' }] }));
  // A session's model is fixed when it starts: its first turn says hello, its second takes the steps.
  writeFileSync(path.join(scratch, 'steps.json'), JSON.stringify({ steps: [{ content: 'hello' }, ...Array.from({ length: STEPS }, (_, i) => step(i)), { content: 'done' }] }));
  const started: ChildProcess[] = [];
  const connection = await (async () => {
    // Warm: the embedded server and the background worker come up with a first session.
    await finish(cli(env, ['run', '--policy', 'auto', '--model', 'scripted:hello.json', '--json', 'warm up'], scratch));
    return Connection.connect({ address: `127.0.0.1:${port}` });
  })();
  const client = new Client({ connection });
  const consoleProc = cli(env, ['console', '--port', '0'], scratch);
  started.push(consoleProc);
  const consoleUrl = await new Promise<URL>((resolve) => lines(consoleProc.stdout!, (l) => l.startsWith('http') && resolve(new URL(l))));
  const results: Record<string, ReturnType<typeof stats>>[] = [];
  try {
    for (let run = 1; run <= RUNS; run++) {
      const sessionId = `bench-watch-${run}-${Date.now()}`;
      await finish(cli(env, ['run', '--policy', 'auto', '--model', 'scripted:steps.json', '--json', '--session', sessionId, 'hello'], scratch));
      const turnId = `${sessionId}/turn-2`;
      const viaStatus = new Map<string, Seen>();
      const viaConsole = new Map<string, Seen>();
      const floor: number[] = [];
      const polled: number[] = [];
      const follower = cli(env, ['status', sessionId, '--follow', '--json'], scratch);
      started.push(follower);
      spansOf((f) => lines(follower.stdout!, f), viaStatus);
      const sse = await new Promise<import('node:http').IncomingMessage>((resolve) =>
        get(`${consoleUrl.origin}/api/events?id=${encodeURIComponent(sessionId)}`, { headers: { Authorization: `Bearer ${TOKEN}` } }, resolve),
      );
      spansOf((f) => lines(sse, f), viaConsole);
      await new Promise((r) => setTimeout(r, 1_500)); // both attached
      const sent = Date.now();
      const turn = finish(cli(env, ['run', '--json', '--session', sessionId, 'step along'], scratch));
      const stop = new AbortController();
      // The floor: a bare long poll on the turn's history, each completion as it arrives.
      const bare = (async () => {
        while (!stop.signal.aborted) {
          const f = new HistoryFollower(client, turnId);
          if (await f.load(stop.signal).catch(() => false)) {
            let known = f.current()[0]?.events.length ?? 0;
            while (!f.closed && (await f.next(stop.signal).catch(() => 'closed')) === 'changed') {
              const events = f.current().flatMap((r) => r.events);
              for (const e of events.slice(known)) if (e.kind === 'activityCompleted' || e.kind === 'localActivity') floor.push(Date.now() - (e.kind === 'localActivity' ? (e.completedAt ?? e.at) : e.at));
              known = events.length;
            }
            return;
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      })();
      // Before: `run` polled the turn's state every 250 ms and printed `… step N` when it changed.
      const poll = (async () => {
        let last = 0;
        while (!stop.signal.aborted) {
          const s = await client.workflow.getHandle(turnId).query<{ step: number; status: string }>('turnState').catch(() => undefined);
          if (s && s.step !== last) {
            if (last > 0) polled.push(Date.now());
            last = s.step;
          }
          if (s?.status === 'done') return;
          await new Promise((r) => setTimeout(r, 250));
        }
      })();
      await turn;
      await new Promise((r) => setTimeout(r, 1_000));
      stop.abort();
      await Promise.all([bare, poll]);
      follower.kill('SIGINT');
      sse.destroy();
      // The old way, timed from the end of the step before the one it reported.
      const stepEnds = [...viaStatus.values()].map((s) => s.end).sort((a, b) => a - b);
      const before = polled.map((at) => at - Math.max(...stepEnds.filter((e) => e <= at)));
      // Spans of this turn only (the session's first turn is replayed to a new console view).
      const lat = (m: Map<string, Seen>) => [...m.values()].filter((s) => s.end >= sent).map((s) => s.at - s.end);
      const r = { console: stats(lat(viaConsole)), status_follow: stats(lat(viaStatus)), long_poll_floor: stats(floor), query_poll_before: stats(before.filter(Number.isFinite)) };
      results.push(r);
      console.log(`  run ${run} (${fmt((Date.now() - sent) / 1000, 1)} s): ${show('console', r.console)} · ${show('status --follow', r.status_follow)} · ${show('floor', r.long_poll_floor)} · ${show('before (state query every 250 ms)', r.query_poll_before)}`);
    }
  } finally {
    for (const c of started) c.kill('SIGINT');
    await connection.close();
    await finish(cli(env, ['dev', '--stop'], scratch)).catch((err: Error) => console.error(`could not stop the embedded server: ${err.message}`));
    rmSync(scratch, { recursive: true, force: true });
  }
  const load = os.loadavg();
  const worst = Math.max(...results.flatMap((r) => [r.console!.p95, r.status_follow!.p95]));
  console.log(
    `bench:watch — ${RUNS} runs of ${STEPS} steps, nproc ${os.availableParallelism()}, load ${load.map((l) => fmt(l)).join(' ')} (at start ${loadStart.map((l) => fmt(l)).join(' ')}); ` +
      `worst p95 ${fmt(worst, 0)} ms (target < ${TARGET_P95_MS} ms: ${worst < TARGET_P95_MS ? 'met' : 'missed'})`,
  );
  console.log(JSON.stringify({ bench: 'watch', runs: RUNS, steps: STEPS, nproc: os.availableParallelism(), loadavg: load.map((l) => Number(fmt(l))), results }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
