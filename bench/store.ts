/**
 * bench:store — what a durable step's one message-store write costs on the embedded database: a
 * model call's commit (the step's tool result and the model's reply chained after the
 * conversation: one putChain statement) through the worker's pool, which reaches PGlite in-process,
 * against the same write over TCP to the same database (how every connection went before, and
 * how other processes still connect), alternated in one run. Wall time and this process's CPU a
 * write (PGlite runs in this process, so its CPU is in the figure), medians of the rounds.
 * Target: the message store <= 1 ms a step.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startEmbeddedPostgres } from '../activities/memory/embedded';
import { memoryPool } from '../activities/memory/database';
import { migrate } from '../activities/memory/migrate';
import { Conversations } from '../activities/store/conversations';
import { PgMessageStore } from '../activities/store/pg-message-store';
import type { ChatMessage } from '../deterministic/types';
import { ownCpuMs } from './cpu';
import { fmt, median } from './stats';
import { runScript } from '../scripts/scratch';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const STEPS = Number(process.env.BENCH_STEPS ?? 200);
const TARGET_MS = 1;

/** One path's rounds: wall and CPU a step write, per round. */
interface Path {
  wall: number[];
  cpu: number[];
}

/** A step as a turn writes it: the tool's result, then the model's next reply with a tool call. */
function stepMessages(i: number): { tool: ChatMessage; reply: ChatMessage } {
  return {
    tool: { role: 'tool', tool_call_id: `c${i}-0`, content: JSON.stringify({ ok: true, result: { stdout: `line ${i}\n`.repeat(8), exit_code: 0 } }) },
    reply: { role: 'assistant', content: `Step ${i}: reading the next file.`, tool_calls: [{ id: `c${i + 1}-0`, name: 'read_file', arguments: JSON.stringify({ path: `src/file-${i}.ts` }) }] },
  };
}

/** STEPS step writes of one session through `conversations`, as the model call makes them. */
async function round(conversations: Conversations, sessionId: string): Promise<{ wall: number; cpu: number }> {
  let head = (await conversations.append(sessionId, null, [], [{ role: 'system', content: 'bench' }, { role: 'user', content: 'go' }])).head;
  const [t0, c0] = [performance.now(), ownCpuMs()];
  for (let i = 0; i < STEPS; i++) {
    const { tool, reply } = stepMessages(i);
    const draft = await conversations.draft(sessionId, head, [{ message: tool }]);
    head = (await conversations.commit(sessionId, draft, [reply])).head;
  }
  return { wall: (performance.now() - t0) / STEPS, cpu: (ownCpuMs() - c0) / STEPS };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-store-'));
  const db = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pgdata') });
  const pools = { 'in-process': memoryPool(db.url, {}, db.connect), tcp: memoryPool(db.url) };
  const results: Record<keyof typeof pools, Path> = { 'in-process': { wall: [], cpu: [] }, tcp: { wall: [], cpu: [] } };
  try {
    await migrate(pools.tcp);
    const stores = Object.fromEntries(Object.entries(pools).map(([k, pool]) => [k, new Conversations(() => Promise.resolve(new PgMessageStore(pool)))])) as Record<keyof typeof pools, Conversations>;
    for (let r = 0; r < ROUNDS + 1; r++) {
      for (const k of ['tcp', 'in-process'] as const) {
        const got = await round(stores[k], `bench-${k}-${r}`);
        if (r === 0) continue; // warm-up: prepared statements, PGlite's compiled code
        results[k].wall.push(got.wall);
        results[k].cpu.push(got.cpu);
      }
    }
  } finally {
    await Promise.all(Object.values(pools).map((p) => p.end()));
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const inp = results['in-process'];
  const tcp = results.tcp;
  const w = median(inp.wall);
  console.log(`bench:store — a step's store write (putChain of the tool result and the reply), ${ROUNDS} rounds of ${STEPS} steps after a warm-up, alternated; nproc ${os.availableParallelism()}, load ${os.loadavg().map((l) => fmt(l)).join(' ')}`);
  console.log(`  in-process (the worker's pool): median ${fmt(w, 3)} ms wall, ${fmt(median(inp.cpu), 3)} ms CPU a step (target <= ${TARGET_MS} ms: ${w <= TARGET_MS ? 'met' : 'missed'})`);
  console.log(`  over TCP (baseline):            median ${fmt(median(tcp.wall), 3)} ms wall, ${fmt(median(tcp.cpu), 3)} ms CPU a step`);
  console.log(`  TCP / in-process: wall ${fmt(median(tcp.wall) / w)}x, CPU ${fmt(median(tcp.cpu) / median(inp.cpu))}x`);
  console.log(JSON.stringify({ bench: 'store', rounds: ROUNDS, steps: STEPS, nproc: os.availableParallelism(), inProcess: { wallMs: Number(fmt(w, 3)), cpuMs: Number(fmt(median(inp.cpu), 3)) }, tcp: { wallMs: Number(fmt(median(tcp.wall), 3)), cpuMs: Number(fmt(median(tcp.cpu), 3)) }, targetMs: TARGET_MS }));
}

runScript(main);
