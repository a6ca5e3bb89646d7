/** Every run of a workflow id, oldest first, with its events decoded for the trace. */
import type { Client } from '@temporalio/client';
import type { History } from '@temporalio/common/lib/proto-utils';
import { resetBase, workflowRuns } from '../workflow-runs';
import { decodeEvents, type HistoryEvent, type TraceEvent } from './events';

export { resetBase };

/** One run of a workflow with its decoded events. */
export interface Run {
  workflowId: string;
  runId: string;
  workflowType: string;
  /** The run this one continued (continue-as-new), if any. */
  continuedFrom?: string;
  /** The run this one was reset from (`harness retry`): its history up to the reset point is this run's too. */
  resetFrom?: string;
  events: TraceEvent[];
}

/**
 * Fetches every run of `workflowId`, oldest first; none when the id is unknown. A run that was
 * reset is left out: the run made by the reset holds its history up to the reset point again.
 */
export async function fetchRuns(client: Client, workflowId: string): Promise<Run[]> {
  return decodeRuns(workflowId, await workflowRuns(client, workflowId));
}

/** The runs of fetched histories (as fetchRuns gives them), for a caller that also reads the raw events. */
export function decodeRuns(workflowId: string, raw: { runId: string; history: History }[]): Run[] {
  const all = raw.map(({ runId, history }) => ({ runId, history, resetFrom: resetBase(history.events) }));
  const reset = new Set(all.map((r) => r.resetFrom).filter(Boolean));
  return all.filter((r) => !reset.has(r.runId)).map(({ runId, history, resetFrom }) => {
    const events = decodeEvents((history.events ?? []) as HistoryEvent[]);
    const started = events.find((e) => e.kind === 'started');
    return {
      workflowId,
      runId,
      workflowType: started?.kind === 'started' ? started.workflowType : '',
      ...(started?.kind === 'started' && started.continuedFrom ? { continuedFrom: started.continuedFrom } : {}),
      ...(resetFrom ? { resetFrom } : {}),
      events,
    };
  });
}
