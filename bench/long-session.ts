/**
 * What the history benches (bench:trace, bench:cost) share: a session whose one turn runs N
 * steps of a scripted clock call, run to its end; fetching its histories alone (their baseline);
 * timing one call.
 */
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { type TurnResult } from '../deterministic/session';
import { DEFAULT_LIMITS, type SessionConfig } from '../deterministic/session-config';
import { freezePolicy } from '../deterministic/policy';
import { parsePolicy } from '../deterministic/policy/schema';
import { sendMessage } from '../client/session-client';
import { waitForTurn } from '../client/turn-wait';
import { workflowRuns } from '../history/workflow-runs';

const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', 'Asia/Tokyo', 'Australia/Sydney'];

/** A session of `steps` steps: a clock call each (in five time zones, so no repeat stops it), then an answer. */
export function longSessionConfig(steps: number, extra: Partial<SessionConfig> = {}): SessionConfig {
  const script = [
    ...Array.from({ length: steps - 1 }, (_, i) => ({ tool_calls: [{ name: 'get_current_time', arguments: { timezone: ZONES[i % ZONES.length] } }] })),
    { content: 'done' },
  ];
  return {
    model: { provider: 'scripted', model: 'scripted', script: { steps: script } },
    systemPrompt: 'bench',
    limits: { ...DEFAULT_LIMITS, maxSteps: steps, repeatLimit: 100_000 },
    policy: freezePolicy(parsePolicy({ mode: 'auto', defaults: false })),
    ...extra,
  };
}

/** Runs the session's one turn to its end (it must take all `steps`). */
export async function runLongSession(client: Client, taskQueue: string, prefix: string, steps: number, extra?: Partial<SessionConfig>): Promise<{ sessionId: string; turnId: string; result: TurnResult }> {
  const sessionId = `${prefix}-${randomUUID().slice(0, 8)}`;
  const { turnId } = await sendMessage(client, { taskQueue, sessionId, config: longSessionConfig(steps, extra), text: 'go' });
  const out = await waitForTurn(client, turnId, { pollMs: 200 });
  if (out.kind !== 'done' || out.result.steps !== steps) throw new Error(`bench turn did not run ${steps} steps: ${JSON.stringify(out).slice(0, 2000)}`);
  return { sessionId, turnId, result: out.result };
}

/** Baseline: the histories of every run of the session and of its turn, nothing read. */
export async function fetchOnly(client: Client, ids: string[]): Promise<{ runs: number; events: number }> {
  let runs = 0;
  let events = 0;
  for (const id of ids) {
    for (const r of await workflowRuns(client, id)) {
      runs++;
      events += r.history.events?.length ?? 0;
    }
  }
  return { runs, events };
}

/** How long `fn` took, in ms, and what it returned. */
export async function time<T>(fn: () => Promise<T> | T): Promise<[number, T]> {
  const t0 = performance.now();
  const out = await fn();
  return [performance.now() - t0, out];
}
