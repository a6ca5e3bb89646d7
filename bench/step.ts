/**
 * bench:step — what durability costs per ReAct step. A 50-step turn (scripted model with no
 * delay, a no-op tool each step) runs durably on a real Temporal dev server (SQLite, as the
 * embedded default) and, as the baseline in the same run, through the very same runTurn()
 * in-process with the same model client and tool executor but no Temporal.
 * Per-step time = from one model call's start to the next; durable steps are read from history.
 * Targets (issue 24): durable overhead <= 8 ms/step, the message store <= 1 ms/step.
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { builtinRegistry } from '../common/builtin-tools';
import { DEFAULT_LIMITS, type SessionConfig, type TurnInput } from '../common/session';
import { OpenAIModelClient } from '../activities/model-client';
import { createToolExecutor } from '../activities/tools/executor';
import { sendMessage, waitForTurn } from '../client/session-client';
import { startScriptedModel } from '../scripted/server';
import { runTurn } from '../workflows/turn-loop';
import { parsePolicy } from '../common/policy/schema';
import { fmt, median } from './stats';
import { runScript, withScratchHarness } from '../scripts/scratch';

const STEPS = 50;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

const script = {
  steps: [
    ...Array.from({ length: STEPS - 1 }, (_, i) => ({ tool_calls: [{ name: 'get_current_time', arguments: { timezone: i % 2 ? 'UTC' : 'Europe/Paris' } }] })),
    { content: 'done' },
  ],
};

function config(model: SessionConfig['model'], inline = false): SessionConfig {
  return { model, systemPrompt: 'bench', limits: { ...DEFAULT_LIMITS, maxSteps: STEPS, repeatLimit: 1000 }, ...(inline ? { inlineHistory: true } : {}) };
}

/** What the durable runs of one path measured. */
interface Durable {
  steps: number[];
  perTurnMs: number[];
  eventsPerStep: number;
  bytesPerStep: number;
}

/**
 * Durable: per-step times from the history's callModel scheduling timestamps, for the message
 * store (every turn) and for the conversation carried inline (turns before it), runs alternated
 * so a noisy moment of the machine weighs on both alike.
 */
async function durable(client: Client, taskQueue: string): Promise<{ store: Durable; inline: Durable }> {
  const acc = { store: { steps: [] as number[], perTurnMs: [] as number[], events: 0, bytes: 0 }, inline: { steps: [] as number[], perTurnMs: [] as number[], events: 0, bytes: 0 } };
  for (let run = 0; run < RUNS + 1; run++) {
    for (const path of ['store', 'inline'] as const) {
      const sessionId = `bench-${randomUUID().slice(0, 8)}`;
      const t0 = performance.now();
      const model = { provider: 'scripted' as const, model: 'scripted', script };
      const { turnId } = await sendMessage(client, { taskQueue, sessionId, config: config(model, path === 'inline'), text: 'go' });
      const out = await waitForTurn(client, turnId, { pollMs: 20 });
      const elapsed = performance.now() - t0;
      if (out.kind !== 'done' || out.result.steps !== STEPS) throw new Error(`bench turn did not run ${STEPS} steps: ${JSON.stringify(out)}`);
      const history = await client.workflow.getHandle(turnId).fetchHistory();
      if (run === 0) continue; // warm-up: bundle caches, connections, the scripted server
      const a = acc[path];
      a.perTurnMs.push(elapsed / STEPS);
      const starts = history
        .events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
        .map((e) => Number(e.eventTime!.seconds) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6);
      for (let i = 1; i < starts.length; i++) a.steps.push(starts[i]! - starts[i - 1]!);
      a.events += history.events!.length;
      a.bytes += Buffer.byteLength(JSON.stringify(history));
    }
  }
  const done = (a: (typeof acc)['store']): Durable => ({ steps: a.steps, perTurnMs: a.perTurnMs, eventsPerStep: a.events / (RUNS * STEPS), bytesPerStep: a.bytes / (RUNS * STEPS) });
  return { store: done(acc.store), inline: done(acc.inline) };
}

/** Baseline: the same loop in-process with the same model client (HTTP) and tool executor. */
async function inProcess(home: string): Promise<{ steps: number[]; perTurnMs: number[] }> {
  const server = await startScriptedModel({});
  const client = new OpenAIModelClient({ apiKey: 'bench', baseURL: server.url, timeoutMs: 60_000 });
  const tools = createToolExecutor({ home });
  const specs = builtinRegistry().specs();
  const steps: number[] = [];
  const perTurnMs: number[] = [];
  for (let run = 0; run < RUNS + 1; run++) {
    const sessionId = `inproc-${randomUUID().slice(0, 8)}`;
    server.registerScript(sessionId, script);
    const input: TurnInput = {
      sessionId, turn: 1, turnId: `${sessionId}/turn-1`, config: config({ provider: 'openai', model: 'scripted', baseUrl: server.url }),
      history: [], memory: {}, userMessage: 'go', modelCallBase: 0,
    };
    const starts: number[] = [];
    const t0 = performance.now();
    const result = await runTurn(input, {
      onStep: () => starts.push(performance.now()),
      callModel: async (req) => ({
        ...(await client.complete({
          model: req.model.model, messages: req.messages ?? [], tools: specs.filter((s) => req.tools.includes(s.name)),
          headers: { 'x-harness-session': req.sessionId, 'x-harness-call-index': String(req.callIndex) },
        })),
        attempt: 1, latencyMs: 0,
      }),
      executeTool: (call) => tools.execute({ sessionId, name: call.name, args: call.args }),
      askUser: async () => undefined,
      awaitApprovals: async () => new Map(),
    }, { policy: parsePolicy(undefined) });
    const elapsed = performance.now() - t0;
    if ('continueAsNew' in result || result.steps !== STEPS) throw new Error(`in-process turn did not run ${STEPS} steps`);
    if (run === 0) continue;
    perTurnMs.push(elapsed / STEPS);
    for (let i = 1; i < starts.length; i++) steps.push(starts[i]! - starts[i - 1]!);
  }
  await server.close();
  return { steps, perTurnMs };
}

async function main(): Promise<void> {
  await withScratchHarness('bench', async ({ client, taskQueue, home }) => {
    const base = await inProcess(home);
    const { store: dur, inline: inl } = await durable(client, taskQueue);
    const d = median(dur.steps);
    const i = median(inl.steps);
    const b = median(base.steps);
    console.log(`bench:step — ${STEPS}-step turn, ${RUNS} measured runs each (after one warm-up), ${os.cpus().length} cores`);
    console.log(`  in-process (baseline): median ${fmt(b)} ms/step  (whole turn ${fmt(median(base.perTurnMs))} ms/step)`);
    console.log(`  durable (Temporal):    median ${fmt(d)} ms/step  (whole turn ${fmt(median(dur.perTurnMs))} ms/step)`);
    console.log(`  durable, inline conversation: median ${fmt(i)} ms/step  (whole turn ${fmt(median(inl.perTurnMs))} ms/step)`);
    console.log(`  ratio durable/baseline: ${fmt(d / b)}x   durable overhead: ${fmt(d - b)} ms/step (target <= 8); message store costs ${fmt(d - i)} ms/step (target <= 1)`);
    console.log(`  history: ${fmt(dur.eventsPerStep, 1)} events/step, ${fmt(dur.bytesPerStep / 1024, 1)} KiB/step (inline: ${fmt(inl.bytesPerStep / 1024, 1)} KiB/step)`);
  });
}

runScript(main);
