/** Every run of a workflow id, oldest first, with its events decoded for the trace. */
import type { Client } from '@temporalio/client';
import { workflowRuns } from '../workflow-runs';
import { decodeEvents, type HistoryEvent, type TraceEvent } from './events';

/** One run of a workflow with its decoded events. */
export interface Run {
  workflowId: string;
  runId: string;
  workflowType: string;
  /** The run this one continued (continue-as-new), if any. */
  continuedFrom?: string;
  events: TraceEvent[];
}

/** Fetches every run of `workflowId`, oldest first; none when the id is unknown. */
export async function fetchRuns(client: Client, workflowId: string): Promise<Run[]> {
  return (await workflowRuns(client, workflowId)).map(({ runId, history }) => {
    const events = decodeEvents((history.events ?? []) as HistoryEvent[]);
    const started = events.find((e) => e.kind === 'started');
    return {
      workflowId,
      runId,
      workflowType: started?.kind === 'started' ? started.workflowType : '',
      ...(started?.kind === 'started' && started.continuedFrom ? { continuedFrom: started.continuedFrom } : {}),
      events,
    };
  });
}
