/**
 * What a client waiting on a turn can tell a person: whether Temporal answers, whether a
 * worker polls the task queue, and how the turn's model call is doing (attempt, endpoint,
 * last failure). Everything here reads server state; nothing changes a workflow.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isGrpcServiceError, ServiceError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { tcpProbe } from './temporal';

/** Something that stops a wait from making progress, in words for a person. */
export interface Trouble {
  /** `temporal`: the server does not answer; `worker`: no worker answers for the workflow. */
  kind: 'temporal' | 'worker';
  /** One line, e.g. `Temporal at 127.0.0.1:7233 is unreachable (connect ECONNREFUSED …)`. */
  text: string;
}

// gRPC status codes a wait rides out: the server is down, restarting, overloaded or slow.
const CANCELLED = 1;
const UNKNOWN = 2;
const DEADLINE_EXCEEDED = 4;
const RESOURCE_EXHAUSTED = 8;
const ABORTED = 10;
const INTERNAL = 13;
const UNAVAILABLE = 14;
const TRANSIENT = new Set([CANCELLED, UNKNOWN, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, ABORTED, INTERNAL, UNAVAILABLE]);

/** The address a client talks to, for messages. */
export function addressOf(client: Client): string {
  return (client.connection as { options?: { address?: string } }).options?.address ?? 'the Temporal server';
}

/** The gRPC status behind a client error, when there is one. */
function grpcStatus(err: unknown): { code: number; details: string } | undefined {
  const inner = err instanceof ServiceError ? err.cause : err;
  if (!isGrpcServiceError(inner)) return undefined;
  return { code: inner.code, details: connectError(firstLine(inner.details || inner.message)) };
}

/** `connect ECONNREFUSED 127.0.0.1:7233` out of grpc-js's longer account, when it is there. */
function connectError(details: string): string {
  const m = /\b(connect E[A-Z]+[^.]*)/.exec(details) ?? /\b(getaddrinfo E[A-Z]+ \S+)/.exec(details);
  return m ? m[1]!.trim() : details.replace(/\s*Resolution note:.*$/, '');
}

/**
 * Why a call to Temporal failed in a way that waiting may cure, or undefined for any other
 * error (not found, rejected, a bug), which callers rethrow. `call` says what was asked: a
 * query that times out means no worker answered, anything else that the server did not.
 */
export function callTrouble(err: unknown, call: 'server' | 'query', address: string, timeoutMs?: number): Trouble | undefined {
  const s = grpcStatus(err);
  if (!s || !TRANSIENT.has(s.code)) return undefined;
  if (call === 'query' && (s.code === DEADLINE_EXCEEDED || /query timed out/i.test(s.details))) {
    return { kind: 'worker', text: `no worker answered a query within ${timeoutMs ? seconds(timeoutMs) : 'the query timeout'} (busy or stuck?)` };
  }
  if (s.code === UNAVAILABLE) return { kind: 'temporal', text: `Temporal at ${address} is unreachable (${s.details})` };
  if (s.code === DEADLINE_EXCEEDED) return { kind: 'temporal', text: `Temporal at ${address} did not answer${timeoutMs ? ` within ${seconds(timeoutMs)}` : ''}` };
  if (s.code === RESOURCE_EXHAUSTED) return { kind: 'temporal', text: `Temporal at ${address} is overloaded (${s.details})` };
  return { kind: 'temporal', text: `Temporal at ${address} failed a call (${s.details})` };
}

/**
 * A poller counts as live when it polled within this window. An idle worker re-polls about
 * once a minute (long polls), and Temporal forgets pollers after five minutes; three minutes
 * also tolerates some clock skew between this machine and the server.
 */
const LIVE_POLLER_MS = 3 * 60_000;

// temporal.api.enums.v1 values (the proto package is not a direct dependency).
const TASK_QUEUE_KIND_NORMAL = 1;
const TASK_QUEUE_TYPE_WORKFLOW = 1;

/** Whether a worker polls the workflow task queue: `unknown` when the server would not say. */
export type WorkerPresence = 'present' | 'absent' | 'unknown';

/** Asks the server whether any worker polled the workflow task queue recently. */
export async function workerPresence(client: Client, taskQueue: string, timeoutMs = 5_000): Promise<WorkerPresence> {
  try {
    const res = await client.withDeadline(Date.now() + timeoutMs, () =>
      client.workflowService.describeTaskQueue({
        namespace: client.options.namespace,
        taskQueue: { name: taskQueue, kind: TASK_QUEUE_KIND_NORMAL },
        taskQueueType: TASK_QUEUE_TYPE_WORKFLOW,
      }),
    );
    const now = Date.now();
    const live = (res.pollers ?? []).some((p) => {
      const at = p.lastAccessTime?.seconds;
      return at !== undefined && at !== null && now - Number(at) * 1000 < LIVE_POLLER_MS;
    });
    return live ? 'present' : 'absent';
  } catch {
    return 'unknown'; // no permission, server trouble: say nothing rather than guess
  }
}

/** The trouble to report when no worker polls `taskQueue`. */
export function noWorker(taskQueue: string, address: string): Trouble {
  return { kind: 'worker', text: `no worker polls task queue ${taskQueue} on Temporal at ${address}` };
}

/** The outcome of a look at a workflow: its value, or what keeps it from coming. */
export type Look<T> = { ok: true; value: T } | { ok: false; trouble: Trouble };

/** After this long without an answer, a look checks whether the server and a worker are there. */
const SLOW_LOOK_MS = 3_000;
/** Deadline of the describe that checks on the server. */
const PROBE_MS = 5_000;

/**
 * Makes one call about a workflow (`query`: needs a worker; `server`: Temporal alone) within
 * `patienceMs`, and says why when it fails in a way waiting may cure. A call still unanswered
 * after a few seconds is not simply waited out: if the server is unreachable, or no worker
 * polls the workflow's task queue (for a query), that is known at once and returned. Any
 * other error (not found, rejected, a bug) is thrown.
 */
export async function look<T>(client: Client, workflowId: string, call: 'query' | 'server', fn: () => Promise<T>, patienceMs: number): Promise<Look<T>> {
  const stop = new AbortController();
  const settled = client
    .withDeadline(Date.now() + patienceMs, () => client.withAbortSignal(stop.signal, fn))
    .then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
  let outcome = await within(settled, SLOW_LOOK_MS);
  if (!outcome) {
    const early = await diagnose(client, workflowId, call);
    if (early) {
      stop.abort();
      return { ok: false, trouble: early };
    }
    outcome = await settled;
  }
  if ('value' in outcome) return { ok: true, value: outcome.value };
  const trouble = callTrouble(outcome.error, call, addressOf(client), patienceMs);
  if (!trouble) throw outcome.error;
  return { ok: false, trouble: (await diagnose(client, workflowId, call)) ?? trouble };
}

/** `p`'s outcome, or undefined when it takes longer than `ms`; leaves no timer behind. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      p,
      sleep(ms, undefined, { signal: timer.signal }).then(
        () => undefined,
        () => undefined,
      ),
    ]);
  } finally {
    timer.abort();
  }
}

/**
 * What is wrong, if anything we can name: the server's port refuses connections, the server
 * does not answer a describe, or (for queries) no worker polls the workflow's task queue.
 */
export async function diagnose(client: Client, workflowId: string, call: 'query' | 'server'): Promise<Trouble | undefined> {
  const address = addressOf(client);
  const refused = await tcpProblem(address);
  if (refused) return { kind: 'temporal', text: `Temporal at ${address} is unreachable (${refused})` };
  let taskQueue: string;
  try {
    taskQueue = (await client.withDeadline(Date.now() + PROBE_MS, () => client.workflow.getHandle(workflowId).describe())).taskQueue;
  } catch (err) {
    return callTrouble(err, 'server', address, PROBE_MS);
  }
  if (call === 'query' && (await workerPresence(client, taskQueue)) === 'absent') return noWorker(taskQueue, address);
  return undefined;
}

/**
 * Why nothing can be reached at the address (`connection refused`), or undefined when a TCP
 * connection opens. gRPC retries a refused connection until the call's deadline and then
 * reports only the deadline; this names the real cause.
 */
async function tcpProblem(address: string, timeoutMs = 2_000): Promise<string | undefined> {
  const found = await tcpProbe(address, timeoutMs);
  if (found === 'refused') return 'connection refused';
  if (found === 'unresolved') return 'host not found';
  if (found === 'timeout') return `no TCP connection within ${seconds(timeoutMs)}`;
  return undefined;
}

/** How the turn's pending model call is doing, from the turn workflow's description. */
export interface ModelProgress {
  /** The attempt running or about to run (1-based). */
  attempt: number;
  /** Attempts allowed (0: unlimited). */
  maxAttempts: number;
  /** The endpoint the worker calls (from the activity's heartbeat), when known yet. */
  endpoint?: string;
  /** Why the previous attempt failed, when one did. */
  lastFailure?: string;
  /** When the current attempt started (or was scheduled), for how long it has waited. */
  since?: Date;
}

/** The pending callModel activity of a turn, or undefined when the turn is not calling the model. */
export function modelProgress(d: WorkflowExecutionDescription): ModelProgress | undefined {
  const pending = d.raw.pendingActivities?.find((a) => a.activityType?.name === 'callModel');
  if (!pending) return undefined;
  const details = pending.heartbeatDetails?.payloads?.[0];
  let endpoint: string | undefined;
  if (details) {
    try {
      endpoint = (defaultPayloadConverter.fromPayload(details) as { endpoint?: unknown })?.endpoint as string | undefined;
    } catch {
      endpoint = undefined; // details from an older worker: go without
    }
  }
  const since = timestamp(pending.lastStartedTime) ?? timestamp(pending.scheduledTime);
  return {
    attempt: pending.attempt || 1,
    maxAttempts: pending.maximumAttempts || 0,
    ...(typeof endpoint === 'string' && endpoint ? { endpoint } : {}),
    ...(pending.lastFailure?.message ? { lastFailure: failureLine(pending.lastFailure) } : {}),
    ...(since ? { since } : {}),
  };
}

/**
 * The last failure of an attempt in one line. A STORE_UNAVAILABLE failure (the worker could not
 * read or write the conversation in the message store, not a model problem) says so.
 */
function failureLine(f: { message?: string | null; applicationFailureInfo?: { type?: string | null } | null }): string {
  const line = firstLine(f.message ?? '');
  if (f.applicationFailureInfo?.type === 'STORE_UNAVAILABLE' && !/message store/.test(line)) return firstLine(`message store unavailable: ${line}`);
  return line;
}

function timestamp(t: { seconds?: unknown; nanos?: number | null } | null | undefined): Date | undefined {
  if (!t || t.seconds === undefined || t.seconds === null) return undefined;
  return new Date(Number(t.seconds) * 1000 + Math.floor((t.nanos ?? 0) / 1e6));
}

/** `12 s`, `2.5 s`, `3 min`: a duration for a message. */
export function seconds(ms: number): string {
  if (ms >= 120_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

function firstLine(text: string, max = 160): string {
  const line = (text.split('\n')[0] ?? '').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
