/**
 * `harness dev` with OTEL_EXPORTER_OTLP_ENDPOINT set: every few seconds, the turns that closed
 * since the last pass are exported, each once (its trace then holds every step and call: there
 * is nothing running left to export). Temporal's visibility lists them (`WorkflowType =
 * 'turnWorkflow' AND CloseTime >= …`, which the embedded dev server's SQLite visibility answers);
 * the run ids already sent are kept under HARNESS_HOME, per endpoint, so a restarted `harness
 * dev` does not send them again. An export that fails is one line in the dev log and is tried
 * again on the next pass; it never stops the worker.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { UserError } from '../machine/errors';
import { loadTrace } from '../history/trace/index';
import { openMessageStore } from './store-reader';
import { exportSpans } from '../history/trace/otlp';
import { shownUrl } from '../history/trace/otlp-endpoint';

export interface FollowOptions {
  client: Client;
  /** The traces URL to send to. */
  url: URL;
  home: string;
  /** Only turns of this task queue (the one the dev worker serves). */
  taskQueue: string;
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Pause between passes (default 5 s). */
  intervalMs?: number;
}

/** What one pass did. */
export interface PassResult {
  exported: { turnId: string; spans: number }[];
  /** Why the pass stopped early (the receiver failed); the rest waits for the next pass. */
  error?: string;
}

/** Per endpoint: turns that closed before `since` are all sent; `done` holds the run ids sent after it. */
interface EndpointState {
  since: number;
  done: Record<string, number>;
}
type State = Record<string, EndpointState>;

/** How far back each pass looks again: visibility may list a run a little after it closed. */
const LAG_MS = 5 * 60_000;

/** The file with the run ids already exported. */
export function exportedFile(home: string): string {
  return path.join(home, 'otlp-exported.json');
}

/** Starts the passes; stop() waits for the current one to end. */
export function followTurns(opts: FollowOptions): { stop(): Promise<void> } {
  const interval = opts.intervalMs ?? 5_000;
  const shown = shownUrl(opts.url);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  // Said once until it changes: a receiver that is down must not fill the log every 5 s.
  let lastProblem: string | undefined;
  const problem = (why: string) => {
    if (why !== lastProblem) opts.log(`otlp: ${why} (trying again every ${Math.round(interval / 1000)} s)`);
    lastProblem = why;
  };
  const pass = async () => {
    try {
      const r = await exportClosedTurns(opts);
      for (const t of r.exported) opts.log(`otlp: exported ${t.spans} spans of ${t.turnId} to ${shown}`);
      if (r.error) problem(r.error);
      else if (lastProblem !== undefined) {
        opts.log(`otlp: exporting to ${shown} again`);
        lastProblem = undefined;
      }
    } catch (err) {
      problem(`closed turns could not be listed: ${(err as Error).message.split('\n')[0]}`);
    }
  };
  const tick = () => {
    current = pass().finally(() => {
      if (stopped) return;
      timer = setTimeout(tick, interval);
      // The worker keeps dev alive; these passes alone must not.
      timer.unref();
    });
  };
  tick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}

/** One pass: exports every turn closed since the last pass and not sent yet, oldest first. */
export async function exportClosedTurns(opts: FollowOptions, now: number = Date.now()): Promise<PassResult> {
  const file = exportedFile(opts.home);
  const state = readState(file);
  const key = opts.url.href;
  const entry: EndpointState = state[key] ?? { since: 0, done: {} };
  const closed = await listClosedTurns(opts.client, opts.taskQueue, entry.since);
  const result: PassResult = { exported: [] };
  let failedAt: number | undefined;
  // The prompts go along: each model call's whole input, read from the message store (through the
  // worker serving the embedded database, or DATABASE_URL); without it, what history holds.
  const fresh = closed.some((turn) => entry.done[turn.runId] === undefined);
  const store = fresh ? await openMessageStore(opts.home, opts.env) : undefined;
  for (const turn of closed) {
    if (entry.done[turn.runId] !== undefined) continue;
    try {
      const trace = await loadTrace(opts.client, turn.workflowId, store ? { store, wholeInput: true } : {});
      const { sent } = await exportSpans(
        trace.spans.map((s) => s.span),
        opts.url,
        opts.env,
      );
      result.exported.push({ turnId: turn.workflowId, spans: sent });
    } catch (err) {
      // A turn whose history is gone (retention) is skipped for good; anything else is retried.
      if (!(err instanceof UserError && /^no session or turn /.test(err.message))) {
        result.error = err instanceof UserError ? err.message : `${turn.workflowId}: ${(err as Error).message.split('\n')[0]}`;
        failedAt = turn.closedAt;
        break;
      }
    }
    entry.done[turn.runId] = turn.closedAt;
    // Saved after each turn: a dev stopped mid-pass does not send the same turn again.
    writeState(file, { ...state, [key]: entry });
  }
  if (store && 'close' in store) await store.close().catch(() => undefined);
  // Move the window on, but never past a turn that still has to be sent.
  entry.since = Math.max(entry.since, Math.min(now - LAG_MS, failedAt ?? Infinity));
  for (const [runId, at] of Object.entries(entry.done)) if (at < entry.since) delete entry.done[runId];
  writeState(file, { ...state, [key]: entry });
  return result;
}

interface ClosedTurn {
  workflowId: string;
  runId: string;
  closedAt: number;
}

/** Turn workflows of the queue whose last run closed at or after `since`, oldest first. */
async function listClosedTurns(client: Client, taskQueue: string, since: number): Promise<ClosedTurn[]> {
  // A queue name that cannot be quoted safely is filtered here instead of in the query.
  const queueFilter = /^[\w.:/@-]+$/.test(taskQueue) ? ` AND TaskQueue = '${taskQueue}'` : '';
  const sinceFilter = since > 0 ? ` AND CloseTime >= '${new Date(since).toISOString()}'` : '';
  const query = `WorkflowType = 'turnWorkflow'${queueFilter} AND ExecutionStatus != 'Running' AND ExecutionStatus != 'ContinuedAsNew'${sinceFilter}`;
  const out: ClosedTurn[] = [];
  for await (const wf of client.workflow.list({ query })) {
    if (wf.taskQueue !== taskQueue || !wf.closeTime) continue;
    out.push({ workflowId: wf.workflowId, runId: wf.runId, closedAt: wf.closeTime.getTime() });
  }
  return out.sort((a, b) => a.closedAt - b.closedAt);
}

/** The state file; a missing or unreadable one is a fresh start (turns are then sent again). */
function readState(file: string): State {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as State) : {};
  } catch {
    return {};
  }
}

/** Written whole then renamed, so a dev killed mid-write leaves the previous state. */
function writeState(file: string, state: State): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(state)}\n`);
  renameSync(tmp, file);
}
