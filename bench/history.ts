/**
 * bench:history — how a turn's Temporal history grows with its steps. A turn of N steps in which
 * the model writes an 8 KB file each step (write_file, policy auto), for N = 50, 100, 200, runs
 * on a real dev server with the message store (every message stored once, the workflow holding
 * references) and, as the baseline in the same run, with the conversation carried inline in
 * every model call (how turns ran before the store). Reported per N: the turn's history bytes
 * (all its runs), bytes per step, the largest single payload, events, runs and ms per step.
 * The inline path grows quadratically: past about 50 MB Temporal terminates the turn, so it runs
 * only for the smaller N.
 */
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { DEFAULT_LIMITS, type SessionConfig } from '../deterministic/session-config';
import { parsePolicy } from '../deterministic/policy/schema';
import { freezePolicy } from '../deterministic/policy';
import { sendMessage } from '../client/session-client';
import { waitForTurn } from '../client/turn-wait';
import { runScript, withScratchHarness } from '../scripts/scratch';
import { fmt, median } from './stats';
import { payloads } from './history-counts';

const SIZES = (process.env.BENCH_STEPS ?? '50,100,200').split(',').map(Number);
// The inline path is quadratic: 200 steps of 8 KB would pass Temporal's 50 MB limit.
const INLINE_MAX_STEPS = Number(process.env.BENCH_INLINE_MAX ?? 100);
const WRITE_BYTES = 8 * 1024;

function script(steps: number) {
  return {
    steps: [
      ...Array.from({ length: steps - 1 }, (_, i) => ({
        tool_calls: [{ name: 'write_file', arguments: { path: `f${i}.txt`, content: `${i}:`.padEnd(WRITE_BYTES, 'x') } }],
      })),
      { content: 'done' },
    ],
  };
}

function config(steps: number, inline: boolean): SessionConfig {
  return {
    model: { provider: 'scripted', model: 'scripted', script: script(steps) },
    systemPrompt: 'bench',
    limits: { ...DEFAULT_LIMITS, maxSteps: steps, repeatLimit: 10_000 },
    policy: freezePolicy(parsePolicy({ mode: 'auto' })),
    ...(inline ? { inlineHistory: true } : {}),
  };
}

/** One measured turn. */
interface Measure {
  bytes: number;
  events: number;
  runs: number;
  maxPayload: number;
  msPerStep: number;
}

async function measure(client: Client, taskQueue: string, steps: number, inline: boolean): Promise<Measure | string> {
  const sessionId = `hist-${randomUUID().slice(0, 8)}`;
  const { turnId } = await sendMessage(client, { taskQueue, sessionId, config: config(steps, inline), text: 'write the files' });
  const out = await waitForTurn(client, turnId, { pollMs: 200 }).catch((err: Error) => err.message);
  if (typeof out === 'string') return out;
  if (out.kind !== 'done' || out.result.steps !== steps) return `did not finish: ${out.kind === 'done' ? `${out.result.terminated_by} after ${out.result.steps} steps` : 'waits'}`;
  const runIds: { start: number; runId: string }[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowId = '${turnId}'` })) runIds.push({ start: wf.startTime.getTime(), runId: wf.runId });
  let bytes = 0;
  let events = 0;
  let maxPayload = 0;
  const starts: number[] = [];
  for (const r of runIds.sort((a, b) => a.start - b.start)) {
    const history = await client.workflow.getHandle(turnId, r.runId).fetchHistory();
    const evs = history.events ?? [];
    bytes += Buffer.byteLength(JSON.stringify(history));
    events += evs.length;
    maxPayload = Math.max(maxPayload, ...payloads(evs));
    for (const e of evs) {
      if (e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel') starts.push(Number(e.eventTime!.seconds) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6);
    }
  }
  const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
  return { bytes, events, runs: runIds.length, maxPayload, msPerStep: median(gaps) };
}

const kib = (b: number) => `${fmt(b / 1024, 1)} KiB`;

async function main(): Promise<void> {
  await withScratchHarness('history', async ({ client: scratch, taskQueue, address }) => {
    // The inline path's histories are larger than a gRPC message's default 4 MB.
    const connection = await Connection.connect({ address, channelArgs: { 'grpc.max_receive_message_length': 512 * 1024 * 1024 } });
    const client = new Client({ connection, namespace: scratch.options.namespace });
    await measure(client, taskQueue, 5, false); // warm-up: bundle, connections, the store's schema
    console.log(`bench:history — turns of N steps writing ${WRITE_BYTES / 1024} KB each, ${os.cpus().length} cores`);
    console.log('  N     path      history       per step     largest payload  events  runs  ms/step');
    for (const n of SIZES) {
      for (const inline of [false, true]) {
        if (inline && n > INLINE_MAX_STEPS) {
          console.log(`  ${String(n).padEnd(5)} inline    not run: the history would pass Temporal's 50 MB limit`);
          continue;
        }
        const m = await measure(client, taskQueue, n, inline);
        const path = inline ? 'inline' : 'store ';
        if (typeof m === 'string') {
          console.log(`  ${String(n).padEnd(5)} ${path}    ${m}`);
          continue;
        }
        console.log(
          `  ${String(n).padEnd(5)} ${path}    ${kib(m.bytes).padStart(12)}  ${kib(m.bytes / n).padStart(11)}  ${kib(m.maxPayload).padStart(15)}  ${String(m.events).padStart(6)}  ${String(m.runs).padStart(4)}  ${fmt(m.msPerStep).padStart(7)}`,
        );
      }
    }
    console.log('  targets (store): at N = 200 history < 2 MB, no payload > 64 KB, bytes per step flat in N');
    await connection.close();
  });
}

runScript(main);
