/**
 * The turn bench:step and bench:peers measure: 50 steps, a scripted model answering at once, a
 * no-op tool (get_current_time) each step, run durably on a harness worker or in-process
 * through the very same runTurn(). Per-step time = from one model request's arrival at the
 * scripted server to the next, for every framework and baseline alike.
 */
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { builtinRegistry } from '../deterministic/builtin-tools';
import { type TurnInput } from '../deterministic/session';
import { DEFAULT_LIMITS, type SessionConfig } from '../deterministic/session-config';
import { OpenAIModelClient } from '../activities/model/client';
import { createToolExecutor } from '../activities/tools/executor';
import { sendMessage } from '../client/session-client';
import { waitForTurn } from '../client/turn-wait';
import type { ScriptedModelServer } from '../scripted-model/server';
import { runTurn } from '../workflows/turn/loop';
import { parsePolicy } from '../deterministic/policy/schema';

export const STEPS = 50;

export const script = {
  steps: [
    ...Array.from({ length: STEPS - 1 }, (_, i) => ({ tool_calls: [{ name: 'get_current_time', arguments: { timezone: i % 2 ? 'UTC' : 'Europe/Paris' } }] })),
    { content: 'done' },
  ],
};

function config(model: SessionConfig['model'], inline = false): SessionConfig {
  return { model, systemPrompt: 'bench', limits: { ...DEFAULT_LIMITS, maxSteps: STEPS, repeatLimit: 1000 }, ...(inline ? { inlineHistory: true } : {}) };
}

type History = Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>;

/** When a history event happened, in milliseconds since the epoch. */
function eventMs(e: NonNullable<History['events']>[number]): number {
  return Number(e.eventTime!.seconds) * 1000 + (e.eventTime!.nanos ?? 0) / 1e6;
}

/**
 * A turn's steps as the model saw them: milliseconds between one model request's arrival at the
 * scripted server and the next (the same measure for every framework and for the in-process
 * baselines, to a fraction of a millisecond).
 */
export function requestGaps(server: ScriptedModelServer, sessionId: string): number[] {
  const starts = server.requests.filter((r) => r.session === sessionId && r.index !== null).map((r) => r.at);
  return starts.slice(1).map((t, i) => t - starts[i]!);
}

/** Where a durable step's time goes, each a list with one entry per step whose model call ran as an activity (ms). */
export interface StepPhases {
  /** The model activity scheduled → a worker started it (task dispatch). */
  dispatch: number[];
  /** Started → completed: the activity itself (model HTTP call, store writes) and its completion. */
  activity: number[];
  /** Completed → the next workflow task started (the server schedules it, the worker polls it). */
  toTask: number[];
  /** The workflow task: the step's workflow code, the tool's local activity, the next model call scheduled. */
  task: number[];
}

/** The phases of each step of a history, read from when its events happened. */
export function stepPhases(history: History, activityType: string): StepPhases {
  const at = eventMs;
  const events = history.events!;
  const phases: StepPhases = { dispatch: [], activity: [], toTask: [], task: [] };
  for (let i = 0; i < events.length; i++) {
    const scheduled = events[i]!;
    if (scheduled.activityTaskScheduledEventAttributes?.activityType?.name !== activityType) continue;
    const id = String(scheduled.eventId);
    const rest = events.slice(i + 1);
    const started = rest.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId ?? '') === id);
    const completed = rest.find((e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? '') === id);
    if (!started || !completed) continue;
    const after = rest.slice(rest.indexOf(completed));
    const taskStarted = after.find((e) => e.workflowTaskStartedEventAttributes);
    const taskDone = after.find((e) => e.workflowTaskCompletedEventAttributes);
    if (!taskStarted || !taskDone) continue;
    phases.dispatch.push(at(started) - at(scheduled));
    phases.activity.push(at(completed) - at(started));
    phases.toTask.push(at(taskStarted) - at(completed));
    phases.task.push(at(taskDone) - at(taskStarted));
  }
  return phases;
}

/** One durable turn's measurements. */
export interface TurnRun {
  steps: number[];
  phases: StepPhases;
  msPerStep: number;
  events: number;
  bytes: number;
  workflowTasks: number;
}

/** One durable turn on the harness worker against `server`: with the message store, or with the conversation carried inline. */
export async function durableTurn(client: Client, taskQueue: string, path: 'store' | 'inline', server: ScriptedModelServer): Promise<TurnRun> {
  const sessionId = `bench-${randomUUID().slice(0, 8)}`;
  server.registerScript(sessionId, script);
  const t0 = performance.now();
  const model = { provider: 'openai' as const, model: 'scripted', baseUrl: server.url };
  const { turnId } = await sendMessage(client, { taskQueue, sessionId, config: config(model, path === 'inline'), text: 'go' });
  const out = await waitForTurn(client, turnId);
  const elapsed = performance.now() - t0;
  if (out.kind !== 'done' || out.result.steps !== STEPS) throw new Error(`bench turn did not run ${STEPS} steps: ${JSON.stringify(out)}`);
  const history = await client.workflow.getHandle(turnId).fetchHistory();
  return {
    steps: requestGaps(server, sessionId),
    phases: stepPhases(history, 'callModel'),
    msPerStep: elapsed / STEPS,
    events: history.events!.length,
    bytes: Buffer.byteLength(JSON.stringify(history)),
    workflowTasks: history.events!.filter((e) => e.workflowTaskCompletedEventAttributes).length,
  };
}

/** Baseline: the same loop in-process with the same model client (HTTP) and tool executor; the first of `runs + 1` turns warms up. */
export async function inProcessTurns(home: string, runs: number, server: ScriptedModelServer): Promise<{ steps: number[]; perTurnMs: number[] }> {
  const client = new OpenAIModelClient({ apiKey: 'bench', baseURL: server.url, timeoutMs: 60_000 });
  const tools = createToolExecutor({ home });
  const specs = builtinRegistry().specs();
  const steps: number[] = [];
  const perTurnMs: number[] = [];
  for (let run = 0; run < runs + 1; run++) {
    const sessionId = `inproc-${randomUUID().slice(0, 8)}`;
    server.registerScript(sessionId, script);
    const input: TurnInput = {
      sessionId, turn: 1, turnId: `${sessionId}/turn-1`, config: config({ provider: 'openai', model: 'scripted', baseUrl: server.url }),
      history: [], memory: {}, userMessage: 'go', modelCallBase: 0,
    };
    const t0 = performance.now();
    const result = await runTurn(input, {
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
    steps.push(...requestGaps(server, sessionId));
  }
  return { steps, perTurnMs };
}
