/**
 * Every run of a workflow id with its history, oldest first. A session or a long turn continues
 * as new, so its story is spread over several runs: they come from visibility (`WorkflowId =
 * '…'`) and, because visibility lags behind a run that has just started, from the latest run and
 * the chain of runs each one continued. Each history is read in pages (read-history.ts). Used by
 * `harness trace` and `harness replay`.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { readHistory } from './read-history';

/** Every run of the id with its history, oldest first (none when the id is unknown). */
export async function workflowRuns(client: Client, workflowId: string): Promise<{ runId: string; history: History }[]> {
  const queue: string[] = [];
  try {
    const quoted = workflowId.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
    for await (const wf of client.workflow.list({ query: `WorkflowId = '${quoted}'` })) queue.push(wf.runId);
  } catch {
    // A server without this visibility query: the latest run and its chain still tell the runs.
  }
  // Visibility lags behind a run just started: the latest run, and every run each continued.
  const latest = await notFoundAsUndefined(async () => (await client.workflow.getHandle(workflowId).describe()).runId);
  if (latest) queue.push(latest);
  const histories = new Map<string, History>();
  while (queue.length) {
    const runId = queue.shift()!;
    if (histories.has(runId)) continue;
    const history = await notFoundAsUndefined(() => readHistory(client, workflowId, runId));
    if (!history) continue;
    histories.set(runId, history);
    const previous = history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (previous) queue.push(previous);
  }
  return [...histories].map(([runId, history]) => ({ runId, history })).sort((a, b) => startMs(a.history) - startMs(b.history) || resetOrder(a, b));
}

/**
 * A run `harness retry` reset starts when the run it was reset from did (its history is a copy
 * up to the reset point): the run it names as its base comes first.
 */
function resetOrder(a: { runId: string; history: History }, b: { runId: string; history: History }): number {
  if (resetBase(a.history.events) === b.runId) return 1;
  if (resetBase(b.history.events) === a.runId) return -1;
  return 0;
}

/** The run a history was reset from (`harness retry`): its workflow task failed with cause "reset" names it. */
export function resetBase(events: History['events']): string | undefined {
  for (const e of events ?? []) {
    const base = e.workflowTaskFailedEventAttributes?.baseRunId;
    if (base) return base;
  }
  return undefined;
}

/** The description of a workflow id's latest run; undefined when Temporal does not know the id. */
export async function describeWorkflow(client: Client, workflowId: string): Promise<WorkflowExecutionDescription | undefined> {
  return notFoundAsUndefined(() => client.workflow.getHandle(workflowId).describe());
}

/** The history of a workflow id's latest run; undefined when Temporal does not know the id. */
export async function latestHistory(client: Client, workflowId: string): Promise<History | undefined> {
  return notFoundAsUndefined(() => readHistory(client, workflowId));
}

function startMs(history: History): number {
  const t = history.events?.[0]?.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : 0;
}

async function notFoundAsUndefined<T>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || /not found/i.test((err as Error)?.message ?? '')) return undefined;
    throw err;
  }
}
