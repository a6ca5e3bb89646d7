/**
 * Replays workflow histories against the current workflow code: the check that a code
 * change is still compatible with every history already stored or running.
 */
import { existsSync } from 'node:fs';
import { Runtime, Worker } from '@temporalio/worker';
import type { History } from '@temporalio/common/lib/proto-utils';
import { workflowBundlePath } from '../../machine/paths';
import { bundledAtStart } from '../../machine/workflow-bundle';
import { escapingLogger } from '../../machine/terminal/temporal-log';

/** Outcome of replaying one history. */
type ReplayOutcome = { ok: true } | { ok: false; nondeterministic: boolean; message: string };

/** Replays a history with the bundle written by `npm run build` (or the given one). */
export async function replayHistory(history: History | unknown, workflowId: string, bundlePath = workflowBundlePath()): Promise<ReplayOutcome> {
  const source = existsSync(bundlePath) ? { workflowBundle: { codePath: bundlePath } } : bundledAtStart();
  try {
    await Worker.runReplayHistory({ ...source, replayName: `replay-${workflowId}` }, history, workflowId);
    return { ok: true };
  } catch (err) {
    // Matched by name: the error class lives in the workflow package, which we keep out of Node code.
    const e = err as Error;
    const nondeterministic = e?.name === 'DeterminismViolationError' || /nondetermin/i.test(e?.message ?? '');
    return { ok: false, nondeterministic, message: e?.message ?? String(err) };
  }
}

/**
 * The id of the event where a nondeterministic history diverges from the code: the one the
 * SDK names, else the last event of the shortest prefix that no longer replays (a prefix is
 * what a run still in progress would hold, so it replays like one). About log2(events) replays.
 */
export async function firstDivergentEvent(history: History, workflowId: string, message: string, bundlePath = workflowBundlePath()): Promise<number | undefined> {
  const named = /HistoryEvent\(id: (\d+)/.exec(message);
  if (named) return Number(named[1]);
  const events = history.events ?? [];
  // Up to the first workflow task nothing is checked (and a history without one never ends replaying).
  let ok = events.findIndex((e) => e.workflowTaskStartedEventAttributes) + 1;
  if (ok === 0) return undefined;
  const fails = async (n: number) => {
    const out = await replayHistory({ events: events.slice(0, n) }, workflowId, bundlePath);
    return !out.ok && out.nondeterministic;
  };
  if (await fails(ok)) return Number(events[ok - 1]!.eventId);
  let bad = events.length;
  while (bad - ok > 1) {
    const mid = Math.floor((ok + bad) / 2);
    if (await fails(mid)) bad = mid;
    else ok = mid;
  }
  return Number(events[bad - 1]!.eventId);
}

/**
 * A Temporal runtime that logs errors only: a replay that diverges is reported in words, not as
 * the worker's warnings. Call before the first replay of a process; later calls do nothing.
 */
export function quietReplayRuntime(): void {
  try {
    Runtime.install({ logger: escapingLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } } });
  } catch {
    // A runtime is already installed (a worker or a test fixture made one).
  }
}
