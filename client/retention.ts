/**
 * Client side of retention (`harness end --purge`, `harness sessions prune`). What a session
 * stored lives on the worker, so deleting it runs there: a session being ended purges itself
 * at its end; sessions already over are purged by a purgeWorkflow on their task queue. Which
 * sessions are over is Temporal's to say (a running session is never purged); sessions whose
 * closed records Temporal has already dropped (its retention: 24 h on the embedded server) are
 * found by their last write to the message store.
 */
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowFailedError, WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { rootCauseMessage } from '../deterministic/errors';
import type { PurgeAtEnd, PurgeOutcome, purgeWorkflow, storedSessionsWorkflow } from '../workflows/session/purge';
import { UsageError, UserError } from '../machine/errors';
import { endSession } from './session-client';
import { NO_WORKER_HINT, requireWorker } from './require-worker';
import { callTrouble } from './wait-progress';
import type { HostRef } from '../deterministic/host';
import { decodePayload } from '../history/trace/events';
import { latestHistory } from '../history/workflow-runs';
import { describeTrialTurn as trialTurn, notASession } from './trial-ids';
import { formatTurnId } from '../deterministic/turn-id';


const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Workflows whose id names data a worker stores as a session's: sessions, and eval trials run
 * as workflows of their own (each trial is a fresh session: workspace, message-store rows,
 * sandbox; a trial its eval ran itself is found by its turn). Prune purges both; `end` only
 * ends sessions.
 */
const PURGEABLE = ['sessionWorkflow', 'evalCaseWorkflow'];

// A century: anything older than that is everything, and the cutoff stays a valid date.
const MAX_AGE_MS = 100 * 365 * UNITS.d!;

/** An age like `30d`, `12h`, `90m` or `45s` in milliseconds; a usage error (with a hint) otherwise. */
export function parseAge(text: string, flag = '--older-than'): number {
  const m = /^(\d{1,9})([smhd])$/.exec(text.trim());
  const ms = m ? Number(m[1]) * UNITS[m[2]!]! : NaN;
  if (!m || !(ms <= MAX_AGE_MS)) {
    throw new UsageError(`${flag} must be an age like 30d, 12h or 90m, not ${JSON.stringify(text)}`, `give a whole number followed by d (days), h (hours), m (minutes) or s (seconds), e.g. ${flag} 30d`);
  }
  return ms;
}

/** How `end --purge` went. */
type EndPurgeOutcome =
  /** The session ended now and purged itself (or failed to: `purgeFailed`). */
  | ({ kind: 'ended' } & PurgeAtEnd)
  /** A turn is running: the session ends when it is done and purges itself then. */
  | { kind: 'after-turn' }
  /** The session ended now but its purge did not finish within the wait; it goes on on the worker. */
  | { kind: 'pending' }
  /** The session was already over: it was purged by a purgeWorkflow. */
  | { kind: 'was-over'; outcome: PurgeOutcome };

/** How long `end --purge` waits for an idle session to end and purge itself. */
const END_PURGE_WAIT_MS = 5 * 60_000;

/** Ends a session and deletes what it stored; a session already over is purged directly. */
export async function endAndPurge(client: Client, sessionId: string, reason?: string): Promise<EndPurgeOutcome> {
  const d = await describeSession(client, sessionId);
  if (d.status.name !== 'RUNNING') {
    return { kind: 'was-over', outcome: await purgeSessions(client, d.taskQueue, [sessionId], `${sessionId}/purge`) };
  }
  const before = await endSession(client, sessionId, reason, { purge: true });
  if (before.status !== 'idle') return { kind: 'after-turn' };
  const wait = new AbortController();
  try {
    const result = await Promise.race([
      client.workflow.getHandle(sessionId).result() as Promise<PurgeAtEnd>,
      sleep(END_PURGE_WAIT_MS, undefined, { signal: wait.signal }).then(() => undefined),
    ]);
    if (!result) return { kind: 'pending' };
    return { kind: 'ended', ...(result.purged ? { purged: result.purged } : {}), ...(result.purgeFailed ? { purgeFailed: result.purgeFailed } : {}) };
  } catch (err) {
    throw temporalTrouble(err, `session ${sessionId} was asked to end and purge, but its end could not be followed`);
  } finally {
    wait.abort();
  }
}

// Sessions per purgeWorkflow: each purge is a few history events and a small report.
const PURGE_BATCH = 100;

/** Purges sessions that are over, on the worker of `taskQueue`; returns every report and failure. */
export async function purgeSessions(client: Client, taskQueue: string, sessionIds: string[], workflowId?: string): Promise<PurgeOutcome> {
  const out: PurgeOutcome = { purged: [], failed: [] };
  if (sessionIds.length === 0) return out;
  await requireWorker(client, taskQueue, { hint: `${NO_WORKER_HINT}; purging runs on the worker that holds the sessions' data` });
  const base = workflowId ?? `harness-prune-${new Date().toISOString()}-${randomBytes(3).toString('hex')}`;
  for (let i = 0; i < sessionIds.length; i += PURGE_BATCH) {
    const id = sessionIds.length > PURGE_BATCH ? `${base}-${i / PURGE_BATCH + 1}` : base;
    const batch = sessionIds.slice(i, i + PURGE_BATCH);
    const hosts = await hostsOf(client, batch);
    try {
      const r = await client.workflow.execute<typeof purgeWorkflow>('purgeWorkflow', {
        taskQueue,
        workflowId: id,
        args: [{ sessionIds: batch, ...(Object.keys(hosts).length ? { hosts } : {}) }],
        // Two `end --purge` of one ended session at once: the second follows the first.
        workflowIdConflictPolicy: 'USE_EXISTING',
      });
      out.purged.push(...r.purged);
      out.failed.push(...r.failed);
    } catch (err) {
      throw temporalTrouble(err, `the purge ${id} did not finish`);
    }
  }
  return out;
}

/**
 * The sandbox host each session lived on when it ended, read from its latest run's history (the
 * host it was carried over with, then the host each turn result names): a hosted session's
 * workspace and container are on that host, so it is purged there. A trial its eval ran itself
 * is read from its turn. A session Temporal no longer holds has none: its store rows are purged.
 */
async function hostsOf(client: Client, sessionIds: string[]): Promise<Record<string, HostRef>> {
  const out: Record<string, HostRef> = {};
  for (const sessionId of sessionIds) {
    const host = (await lastHost(client, sessionId)) ?? (await lastHost(client, formatTurnId(sessionId, 1)));
    if (host) out[sessionId] = host;
  }
  return out;
}

async function lastHost(client: Client, workflowId: string): Promise<HostRef | undefined> {
  const events = (await latestHistory(client, workflowId).catch((err: unknown) => Promise.reject(temporalTrouble(err, `the history of ${workflowId} could not be read`))))?.events ?? [];
  let host: HostRef | undefined;
  const take = (p: { payloads?: Parameters<typeof decodePayload>[0][] | null } | null | undefined) => {
    const h = (decodePayload(p?.payloads?.[0]) as { host?: unknown } | undefined)?.host;
    if (isHostRef(h)) host = h;
  };
  for (const e of events) {
    take(e.workflowExecutionStartedEventAttributes?.input);
    take(e.childWorkflowExecutionCompletedEventAttributes?.result);
    take(e.workflowExecutionCompletedEventAttributes?.result);
  }
  return host;
}

const isHostRef = (h: unknown): h is HostRef => typeof h === 'object' && h !== null && typeof (h as HostRef).id === 'string' && typeof (h as HostRef).queue === 'string';

/** A session `sessions prune` would purge. */
export interface Prunable {
  sessionId: string;
  /** Temporal's status of its last run (`COMPLETED`, `FAILED`…), or `UNKNOWN` when Temporal no longer has it. */
  status: string;
  /** When its last run closed, when Temporal still knows. */
  closedAt?: Date;
}

/**
 * The sessions of `taskQueue` that are over and were last active before `before`: closed
 * runs Temporal still lists, plus sessions the worker's message store last wrote before then
 * that Temporal has no record of. A session whose last run is running, or closed later, is left.
 */
export async function findPrunable(client: Client, opts: { taskQueue: string; before: Date }): Promise<Prunable[]> {
  await requireWorker(client, opts.taskQueue, { hint: `${NO_WORKER_HINT}; pruning asks the worker which sessions it holds data of` });
  const cutoff = opts.before.toISOString();
  const found = new Map<string, Prunable>();
  // A queue name that cannot be quoted safely is filtered here instead of in the query.
  const queueFilter = /^[\w.:/@-]+$/.test(opts.taskQueue) ? ` AND TaskQueue = '${opts.taskQueue}'` : '';
  const query =
    `WorkflowType IN (${PURGEABLE.map((t) => `'${t}'`).join(', ')})${queueFilter} AND ExecutionStatus != 'Running' ` +
    `AND ExecutionStatus != 'ContinuedAsNew' AND CloseTime < '${cutoff}'`;
  const listed = new Set<string>();
  try {
    for await (const wf of client.workflow.list({ query })) {
      if (wf.taskQueue === opts.taskQueue) listed.add(wf.workflowId);
    }
  } catch (err) {
    throw temporalTrouble(err, 'sessions could not be listed');
  }
  let stored: string[];
  try {
    stored = await client.workflow.execute<typeof storedSessionsWorkflow>('storedSessionsWorkflow', {
      taskQueue: opts.taskQueue,
      workflowId: `harness-prune-list-${new Date().toISOString()}-${randomBytes(3).toString('hex')}`,
      args: [{ before: cutoff }],
    });
  } catch (err) {
    throw temporalTrouble(err, "the worker's stored sessions could not be listed");
  }
  const seen = new Set<string>();
  for (const sessionId of [...listed, ...stored]) {
    if (seen.has(sessionId)) continue;
    seen.add(sessionId);
    // The latest run decides: a failed session started again, or one continued as new, may run.
    const own = await describeSession(client, sessionId, 'any').catch((err: unknown) => {
      if (err instanceof UserError && /^no session named/.test(err.message)) return undefined;
      throw err;
    });
    // Another kind of workflow under an id the store knows is not ours to purge: left alone.
    if (own && !PURGEABLE.includes(own.type)) continue;
    // A trial its eval ran itself has no workflow of its own: its turn says whether it is over.
    const d = own ?? (await describeTrialTurn(client, sessionId));
    if (!d) {
      // Only the store knows it: Temporal's retention dropped its closed runs.
      if (!listed.has(sessionId)) found.set(sessionId, { sessionId, status: 'UNKNOWN' });
      continue;
    }
    if (d.status.name === 'RUNNING' || d.taskQueue !== opts.taskQueue) continue;
    if (!d.closeTime || d.closeTime >= opts.before) continue;
    found.set(sessionId, { sessionId, status: d.status.name, closedAt: d.closeTime });
  }
  return [...found.values()].sort((a, b) => (a.closedAt?.getTime() ?? 0) - (b.closedAt?.getTime() ?? 0) || a.sessionId.localeCompare(b.sessionId));
}

/** The latest run of a session (of any workflow type with 'any'), or a one-line error when there is none. */
async function describeSession(client: Client, sessionId: string, types: 'session' | 'any' = 'session'): Promise<WorkflowExecutionDescription> {
  try {
    const d = await client.workflow.getHandle(sessionId).describe();
    if (types === 'session' && d.type !== 'sessionWorkflow') throw notASession(sessionId, d.type === 'evalCaseWorkflow' ? 'an eval trial' : `a ${d.type} workflow`);
    return d;
  } catch (err) {
    if (err instanceof UserError) throw err;
    if (!(err instanceof WorkflowNotFoundError)) throw temporalTrouble(err, `session ${sessionId} could not be looked up`);
    if (types === 'session' && (await describeTrialTurn(client, sessionId))) throw notASession(sessionId, 'an eval trial');
    throw new UserError(`no session named ${sessionId}`, 'list sessions with `harness sessions`');
  }
}

/** The turn of a trial its eval ran itself, or a one-line error when Temporal does not answer. */
async function describeTrialTurn(client: Client, sessionId: string): Promise<WorkflowExecutionDescription | undefined> {
  try {
    return await trialTurn(client, sessionId);
  } catch (err) {
    throw temporalTrouble(err, `session ${sessionId} could not be looked up`);
  }
}

/** A failed workflow or Temporal not answering as a one-line user error; anything else unchanged. */
function temporalTrouble(err: unknown, what: string): unknown {
  if (err instanceof UserError) return err;
  if (err instanceof WorkflowFailedError) return new UserError(`${what}: ${rootCauseMessage(err)}`, 'see the worker log');
  const trouble = callTrouble(err, 'server', '');
  if (trouble) {
    return new UserError(`${what}: ${rootCauseMessage(err)}`, 'check that the Temporal server runs and that TEMPORAL_ADDRESS points at it; then try again');
  }
  return err;
}
