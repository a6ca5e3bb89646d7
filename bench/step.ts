/**
 * bench:step — what durability costs per ReAct step. A 50-step turn (scripted model with no
 * delay, a no-op tool each step) runs durably on a real Temporal dev server (SQLite, as the
 * embedded default) and, as the baseline in the same run, through the very same runTurn()
 * in-process with the same model client and tool executor but no Temporal.
 * Per-step time = from one model request's arrival at the scripted model to the next
 * (bench/step-turn.ts).
 * Targets: durable overhead <= 8 ms/step, the message store <= 1 ms/step.
 */
import os from 'node:os';
import type { Client } from '@temporalio/client';
import { fmt, median } from './stats';
import { runScript, withScratchHarness } from '../scripts/scratch';
import { durableTurn, inProcessTurns, STEPS, type StepPhases } from './step-turn';
import { startScriptedModel, type ScriptedModelServer } from '../scripted-model/server';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);

/** What the durable runs of one path measured. */
interface Durable {
  steps: number[];
  /** Each measured run's median step, in run order (runs of the two paths alternate). */
  runMedians: number[];
  perTurnMs: number[];
  phases: StepPhases;
  eventsPerStep: number;
  bytesPerStep: number;
  tasksPerStep: number;
}

/**
 * Durable: per-step times for the message store (every turn) and for the conversation carried
 * inline (turns before it), runs alternated so a noisy moment of the machine weighs on both alike.
 */
async function durable(client: Client, taskQueue: string, server: ScriptedModelServer): Promise<{ store: Durable; inline: Durable }> {
  const empty = () => ({ steps: [] as number[], runMedians: [] as number[], perTurnMs: [] as number[], phases: { dispatch: [], activity: [], toTask: [], task: [] } as StepPhases, events: 0, bytes: 0, tasks: 0 });
  const acc = { store: empty(), inline: empty() };
  for (let run = 0; run < RUNS + 1; run++) {
    for (const path of ['store', 'inline'] as const) {
      const turn = await durableTurn(client, taskQueue, path, server);
      if (run === 0) continue; // warm-up: bundle caches, connections, the scripted server
      const a = acc[path];
      a.perTurnMs.push(turn.msPerStep);
      a.steps.push(...turn.steps);
      a.runMedians.push(median(turn.steps));
      for (const k of Object.keys(a.phases) as (keyof StepPhases)[]) a.phases[k].push(...turn.phases[k]);
      a.events += turn.events;
      a.bytes += turn.bytes;
      a.tasks += turn.workflowTasks;
    }
  }
  const done = (a: (typeof acc)['store']): Durable => ({ steps: a.steps, runMedians: a.runMedians, perTurnMs: a.perTurnMs, phases: a.phases, eventsPerStep: a.events / (RUNS * STEPS), bytesPerStep: a.bytes / (RUNS * STEPS), tasksPerStep: a.tasks / (RUNS * STEPS) });
  return { store: done(acc.store), inline: done(acc.inline) };
}

async function main(): Promise<void> {
  await withScratchHarness('bench', async ({ client, taskQueue, home, declarations }) => {
    const server = await startScriptedModel({});
    // The bench's worker declares the endpoint its turns name, as an owner's config would.
    declarations.add({ modelEndpoints: [server.url] });
    const base = await inProcessTurns(home, RUNS, server);
    const { store: dur, inline: inl } = await durable(client, taskQueue, server);
    await server.close();
    const d = median(dur.steps);
    const i = median(inl.steps);
    const b = median(base.steps);
    console.log(`bench:step — ${STEPS}-step turn, ${RUNS} measured runs each (after one warm-up), ${os.cpus().length} cores`);
    console.log(`  in-process (baseline): median ${fmt(b)} ms/step  (whole turn ${fmt(median(base.perTurnMs))} ms/step)`);
    console.log(`  durable (Temporal):    median ${fmt(d)} ms/step  (whole turn ${fmt(median(dur.perTurnMs))} ms/step)`);
    console.log(`  durable, inline conversation: median ${fmt(i)} ms/step  (whole turn ${fmt(median(inl.perTurnMs))} ms/step)`);
    console.log(`  ratio durable/baseline: ${fmt(d / b)}x   durable overhead: ${fmt(d - b)} ms/step (target <= 8); message store costs ${fmt(d - i)} ms/step (target <= 1)`);
    const paired = dur.runMedians.map((m, k) => m - inl.runMedians[k]!);
    console.log(`  message store, paired by run: median ${fmt(median(paired))} ms/step; runs ${paired.map((x) => fmt(x)).join(' ')}`);
    const p = dur.phases;
    // Only steps whose model call ran as an activity have these phases (a quick call runs in the workflow task).
    if (p.task.length) {
      console.log(`  where a durable step goes (medians, ms): dispatch ${fmt(median(p.dispatch))}, model activity ${fmt(median(p.activity))}, to the next workflow task ${fmt(median(p.toTask))}, workflow task ${fmt(median(p.task))}`);
    }
    console.log(`  history: ${fmt(dur.eventsPerStep, 1)} events/step, ${fmt(dur.tasksPerStep, 2)} workflow tasks/step, ${fmt(dur.bytesPerStep / 1024, 1)} KiB/step (inline: ${fmt(inl.bytesPerStep / 1024, 1)} KiB/step)`);
  });
}

runScript(main);
