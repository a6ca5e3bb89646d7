/**
 * Every run of a workflow id, fetched for the ledger: the run ids from visibility and the latest
 * run (with the chain each continued, as history/workflow-runs.ts finds them), their histories fetched
 * at once in large pages (read-history.ts: smaller ones when a page is over the client's message
 * limit). The ledger reads a few kinds of events of long histories, so a quarter
 * of a second of round trips per run, one after another, was most of its time.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { readHistory } from '../read-history';

/** Events per history page asked for (the server may give fewer). */
const PAGE = 10_000;

/** One run's raw history. */
export interface RawRun {
  runId: string;
  history: History;
}

/** Every run of the id with its history, oldest first; none when the id is unknown. */
export async function fetchRawRuns(client: Client, workflowId: string): Promise<RawRun[]> {
  const quoted = workflowId.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
  const listed = (async () => {
    const ids: string[] = [];
    try {
      for await (const wf of client.workflow.list({ query: `WorkflowId = '${quoted}'` })) ids.push(wf.runId);
    } catch {
      // A server without this visibility query: the latest run and its chain still tell the runs.
    }
    return ids;
  })();
  const latest = notFound(async () => (await client.workflow.getHandle(workflowId).describe()).runId);
  const ids = new Set([...(await listed), ...[(await latest) ?? []].flat()]);
  const out = new Map<string, History>();
  // Visibility lags behind a run just started: follow each run's chain back for any it missed.
  let wave = [...ids];
  while (wave.length) {
    const fetched = await Promise.all(wave.map(async (runId) => [runId, await notFound(() => history(client, workflowId, runId))] as const));
    wave = [];
    for (const [runId, h] of fetched) {
      if (!h) continue;
      out.set(runId, h);
      const previous = h.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
      if (previous && !out.has(previous) && !ids.has(previous)) {
        ids.add(previous);
        wave.push(previous);
      }
    }
  }
  return [...out].map(([runId, h]) => ({ runId, history: h })).sort((a, b) => startMs(a.history) - startMs(b.history));
}

function history(client: Client, workflowId: string, runId: string): Promise<History> {
  return readHistory(client, workflowId, runId, { pageSize: PAGE });
}

function startMs(h: History): number {
  const t = h.events?.[0]?.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : 0;
}

async function notFound<T>(fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || /not found/i.test((err as Error)?.message ?? '')) return undefined;
    throw err;
  }
}
