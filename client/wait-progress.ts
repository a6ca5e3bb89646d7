/**
 * What a client waiting on a workflow can tell a person: whether Temporal answers, and whether
 * a worker polls the task queue. Everything here reads server state; nothing changes a workflow.
 * How the turn's model call is doing is in model-progress.ts (re-exported here).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isGrpcServiceError, ServiceError, type Client } from '@temporalio/client';
import { recentTransient, type SeenStatus } from './grpc-status';
import { tcpProbe } from './temporal';
import { GONE_POLLER_MS, lastPoll, type LastPoll } from './worker-presence';
import { callsAbort } from './calls-abort';


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
const FAILED_PRECONDITION = 9;
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

/**
 * The cause out of grpc-js's longer account of a failed connection, in the words the TCP probe
 * uses (`connection refused`, `host not found`), so the same outage reads the same either way.
 */
function connectError(details: string): string {
  if (/\bconnect ECONNREFUSED\b/.test(details)) return 'connection refused';
  if (/\bgetaddrinfo (ENOTFOUND|EAI_AGAIN)\b/.test(details)) return 'host not found';
  const m = /\b(connect E[A-Z]+(?: [^\s,;]+)?)/.exec(details);
  return m ? m[1]!.trim() : details.replace(/\s*Resolution note:.*$/, '');
}

/**
 * Whether the error is Temporal saying no worker polled the task queue while a query waited
 * for one (FAILED_PRECONDITION `no poller seen for task queue recently, worker may be down`,
 * sent a second before the query's deadline): the worker is gone, or has not come back yet.
 */
export function isNoPoller(err: unknown): boolean {
  const s = grpcStatus(err);
  return s?.code === FAILED_PRECONDITION && /poller|worker may be down/i.test(s.details);
}

/**
 * Why a call to Temporal failed in a way that waiting may cure, or undefined for any other
 * error (not found, rejected, a bug), which callers rethrow. `call` says what was asked: a
 * query that times out means no worker answered, anything else that the server did not —
 * unless `seen` (what the SDK retried silently meanwhile, client/grpc-status.ts) says the server
 * was unavailable or overloaded, which is then the reason.
 */
export function callTrouble(err: unknown, call: 'server' | 'query', address: string, timeoutMs?: number, seen?: SeenStatus): Trouble | undefined {
  if (isNoPoller(err)) return { kind: 'worker', text: 'no worker polls the task queue: Temporal saw none poll while the query waited (the worker may be down)' };
  const got = grpcStatus(err);
  if (!got || !TRANSIENT.has(got.code)) return undefined;
  const s = got.code === DEADLINE_EXCEEDED && seen ? { code: seen.code, details: connectError(firstLine(seen.details)) } : got;
  // The server cancels a query whose worker went away with it (`Call cancelled`) as it does one
  // that ran out of time; whether the server itself is there, diagnose() checks apart.
  if (call === 'query' && (s.code === DEADLINE_EXCEEDED || s.code === CANCELLED || /query timed out/i.test(s.details))) {
    return { kind: 'worker', text: `no worker answered a query within ${timeoutMs ? seconds(timeoutMs) : 'the query timeout'} (busy, stuck or just stopped?)` };
  }
  if (s.code === UNAVAILABLE) return { kind: 'temporal', text: `Temporal at ${address} is unreachable (${s.details})` };
  if (s.code === DEADLINE_EXCEEDED) return { kind: 'temporal', text: `Temporal at ${address} did not answer${timeoutMs ? ` within ${seconds(timeoutMs)}` : ''}` };
  if (s.code === RESOURCE_EXHAUSTED) return { kind: 'temporal', text: `Temporal at ${address} is overloaded (${s.details})` };
  return { kind: 'temporal', text: `Temporal at ${address} failed a call (${s.details})` };
}

/** callTrouble for a call made by `client`, taking into account what its connection retried silently. */
export function troubleOf(client: Client, err: unknown, call: 'server' | 'query', timeoutMs?: number): Trouble | undefined {
  return callTrouble(err, call, addressOf(client), timeoutMs, recentTransient(client, (timeoutMs ?? 30_000) + 1_000));
}

/** The trouble to report when no worker polls `taskQueue`; with when the last one polled, when known. */
export function noWorker(taskQueue: string, address: string, last?: LastPoll): Trouble {
  const ago = last?.polled ? ` (its last poll began ${seconds(Math.round(last.agoMs / 1000) * 1000)} ago)` : '';
  return { kind: 'worker', text: `no worker polls task queue ${taskQueue} on Temporal at ${address}${ago}` };
}

/** The outcome of a look at a workflow: its value, or what keeps it from coming. */
type Look<T> = { ok: true; value: T } | { ok: false; trouble: Trouble };

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
  const stop = callsAbort();
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
  const trouble = troubleOf(client, outcome.error, call, patienceMs);
  if (!trouble) throw outcome.error;
  return { ok: false, trouble: (await diagnose(client, workflowId, call, { noPoller: isNoPoller(outcome.error) })) ?? trouble };
}

/** `p`'s outcome, or undefined when it takes longer than `ms`; leaves no timer behind. */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
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
 * does not answer a describe, or (for queries) no worker polls the workflow's task queue — none
 * has polled for longer than a live worker's long poll lasts, or (`noPoller`) Temporal just said
 * none came while a query waited; the line then names the task queue and the last poll.
 */
export async function diagnose(client: Client, workflowId: string, call: 'query' | 'server', opts: { noPoller?: boolean } = {}): Promise<Trouble | undefined> {
  const address = addressOf(client);
  const refused = await tcpProblem(address);
  if (refused) return { kind: 'temporal', text: `Temporal at ${address} is unreachable (${refused})` };
  let taskQueue: string;
  try {
    taskQueue = (await client.withDeadline(Date.now() + PROBE_MS, () => client.workflow.getHandle(workflowId).describe())).taskQueue;
  } catch (err) {
    return troubleOf(client, err, 'server', PROBE_MS);
  }
  if (call !== 'query' && !opts.noPoller) return undefined;
  const last = await lastPoll(client, taskQueue);
  if (opts.noPoller || (last && (!last.polled || last.agoMs > GONE_POLLER_MS))) return noWorker(taskQueue, address, last);
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
