/**
 * Every run of a workflow id, oldest first: a session or a long turn continues as new, so its
 * story is spread over several runs. The runs come from visibility (`WorkflowId = '…'`), and,
 * because visibility lags behind a run that has just started, from the latest run and the chain
 * each run names as the one it continued.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
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
  const runs = new Map<string, Run>();
  const fetch = async (runId: string): Promise<Run | undefined> => {
    let events: HistoryEvent[];
    try {
      const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
      events = history.events ?? [];
    } catch (err) {
      if (err instanceof WorkflowNotFoundError || /not found/i.test((err as Error).message)) return undefined;
      throw err;
    }
    const decoded = decodeEvents(events);
    const started = decoded.find((e) => e.kind === 'started');
    const run: Run = {
      workflowId,
      runId,
      workflowType: started?.kind === 'started' ? started.workflowType : '',
      ...(started?.kind === 'started' && started.continuedFrom ? { continuedFrom: started.continuedFrom } : {}),
      events: decoded,
    };
    runs.set(runId, run);
    return run;
  };

  const listed: { runId: string; start: number }[] = [];
  const escaped = workflowId.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
  let listFailed: unknown;
  try {
    for await (const info of client.workflow.list({ query: `WorkflowId = '${escaped}'` })) {
      listed.push({ runId: info.runId, start: info.startTime.getTime() });
    }
  } catch (err) {
    // A server without this visibility query still has the latest run and its chain.
    listFailed = err;
  }
  listed.sort((a, b) => a.start - b.start);
  for (const { runId } of listed) await fetch(runId);

  // The latest run (visibility may not list it yet), and the runs it continued, back to the first.
  let latestId: string | undefined;
  try {
    latestId = (await client.workflow.getHandle(workflowId).describe()).runId;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError || /not found/i.test((err as Error).message))) throw err;
  }
  for (let id = latestId; id && !runs.has(id); ) {
    const run = await fetch(id);
    id = run?.continuedFrom;
  }
  for (const run of [...runs.values()]) {
    for (let id = run.continuedFrom; id && !runs.has(id); ) id = (await fetch(id))?.continuedFrom;
  }
  if (!runs.size && listFailed) throw listFailed;
  return order([...runs.values()], listed.map((l) => l.runId));
}

/** Runs in the order they ran: each chain from its first run, chains in the order visibility listed them. */
function order(runs: Run[], listed: string[]): Run[] {
  const byPrev = new Map(runs.filter((r) => r.continuedFrom).map((r) => [r.continuedFrom!, r]));
  const ids = new Set(runs.map((r) => r.runId));
  const firsts = runs.filter((r) => !r.continuedFrom || !ids.has(r.continuedFrom));
  const rank = (r: Run) => {
    const i = listed.indexOf(r.runId);
    return i < 0 ? listed.length : i;
  };
  firsts.sort((a, b) => rank(a) - rank(b) || (a.events[0]?.at ?? 0) - (b.events[0]?.at ?? 0));
  const out: Run[] = [];
  for (const f of firsts) {
    for (let r: Run | undefined = f; r && !out.includes(r); r = byPrev.get(r.runId)) out.push(r);
  }
  return out;
}
