/**
 * What a workflow's history says it cost the server: its events, workflow tasks, activity tasks,
 * local activities (markers: no task of their own) and bytes, over every run of the id.
 */
import type { Client } from '@temporalio/client';

type Events = NonNullable<Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['fetchHistory']>>['events']>;

export interface HistoryCounts {
  runs: number;
  events: number;
  workflowTasks: number;
  activityTasks: number;
  localActivities: number;
  bytes: number;
}

/** The sizes of every payload in the events (inputs, results, signal arguments…). */
export function payloads(events: Events): number[] {
  const out: number[] = [];
  const walk = (v: unknown): void => {
    if (!v || typeof v !== 'object' || v instanceof Uint8Array) return;
    const o = v as Record<string, unknown>;
    if (Array.isArray(o.payloads)) for (const p of o.payloads as { data?: Uint8Array }[]) out.push(p.data?.length ?? 0);
    for (const x of Object.values(o)) walk(x);
  };
  for (const e of events) walk(e);
  return out;
}

/** The counts of one workflow id, every run of it. */
export async function historyCounts(client: Client, workflowId: string): Promise<HistoryCounts> {
  const counts: HistoryCounts = { runs: 0, events: 0, workflowTasks: 0, activityTasks: 0, localActivities: 0, bytes: 0 };
  for await (const wf of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const history = await client.workflow.getHandle(workflowId, wf.runId).fetchHistory();
    const events = history.events ?? [];
    counts.runs++;
    counts.events += events.length;
    counts.bytes += Buffer.byteLength(JSON.stringify(history));
    for (const e of events) {
      if (e.workflowTaskScheduledEventAttributes) counts.workflowTasks++;
      if (e.activityTaskScheduledEventAttributes) counts.activityTasks++;
      if (e.markerRecordedEventAttributes?.markerName === 'core_local_activity') counts.localActivities++;
    }
  }
  return counts;
}

/** Counts added up (a trial's workflows together). */
export function sumCounts(all: HistoryCounts[]): HistoryCounts {
  return all.reduce((a, b) => ({
    runs: a.runs + b.runs,
    events: a.events + b.events,
    workflowTasks: a.workflowTasks + b.workflowTasks,
    activityTasks: a.activityTasks + b.activityTasks,
    localActivities: a.localActivities + b.localActivities,
    bytes: a.bytes + b.bytes,
  }));
}

/** A 1/n share of a workflow's counts (a trial's part of its eval's own history); its run is not one of the trial's. */
export function shareOf(c: HistoryCounts, n: number): HistoryCounts {
  return { runs: 0, events: c.events / n, workflowTasks: c.workflowTasks / n, activityTasks: c.activityTasks / n, localActivities: c.localActivities / n, bytes: c.bytes / n };
}
