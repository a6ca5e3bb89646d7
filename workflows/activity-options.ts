/**
 * The activities a turn runs tools through, with their timeouts and retry policies: one place
 * says how long each kind of tool call may take and when it is retried.
 */
import { ActivityCancellationType, proxyActivities, proxyLocalActivities, type ActivityOptions, type RetryPolicy } from '@temporalio/workflow';
import type { createActivities } from '../activities';
import { LOCAL_CALL_BUDGET_MS, MCP_NEEDS_ACTIVITY } from '../deterministic/mcp';

export type Activities = ReturnType<typeof createActivities>;

export const TOOL_RETRY: RetryPolicy = { maximumAttempts: 3, initialInterval: '200ms', nonRetryableErrorTypes: ['INVALID_SESSION', 'INVALID_SCRIPT'] };

export const { executeTool } = proxyActivities<Activities>({
  // Turns recorded before per-tool timeouts ran every tool with this bound.
  startToCloseTimeout: '11 minutes',
  retry: TOOL_RETRY,
});

/**
 * Activities that are mostly a message-store read or write (a session's script, a turn's call
 * records, a fork's conversation). A store outage (STORE_UNAVAILABLE: the database restarting
 * or refusing) is ridden out by time, not by three attempts that a few seconds of outage use up:
 * retried with backoff up to 15 s for ten minutes. An attempt is seconds, never minutes, so a
 * lost one (a worker or server gone) is retried after a minute at most. Options are not part of
 * replay (the SDK compares an activity's type and id only) and a scheduled activity keeps the
 * ones it was given, so changing them needs no patch.
 */
export const STORE_ACTIVITY: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  scheduleToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '15s', maximumAttempts: 100, nonRetryableErrorTypes: TOOL_RETRY.nonRetryableErrorTypes },
};

// Preparing a turn reads the skills folders, a few memories and a scripted model's stored script.
export const { prepareTurn, storeValue } = proxyActivities<Activities>(STORE_ACTIVITY);

/** The no-op activity that ends a workflow task (workflows/model-call.ts): quick, so a short bound and a few quick retries. */
export const { checkpoint } = proxyActivities<Activities>({ startToCloseTimeout: '10s', retry: { maximumAttempts: 5, initialInterval: '200ms' } });

/**
 * prepareTurn on the worker that runs the turn's first workflow task, for a session without a
 * host (or whose host was lost): that worker serves the shared queue, as the one a regular
 * activity would reach, so it hosts the session either way. It saves a trial or a short turn an
 * activity task and a workflow task. The same bounds: a store outage is ridden out for ten
 * minutes, the backoff past a minute on a timer (the SDK's local retry threshold).
 */
export const { prepareTurn: prepareTurnHere } = proxyLocalActivities<Activities>(STORE_ACTIVITY);

/** Listing a server's tools again is bounded by its own startup timeout; this covers the slowest. */
export function discoverActivity(servers: readonly { startupTimeoutMs: number }[]): Activities['discoverMcpTools'] {
  const slowest = Math.max(1_000, ...servers.map((s) => s.startupTimeoutMs));
  return proxyActivities<Activities>({
    startToCloseTimeout: slowest + TOOL_TIMEOUT_MARGIN_MS,
    heartbeatTimeout: TOOL_HEARTBEAT,
    retry: { maximumAttempts: 2, initialInterval: '1s' },
  }).discoverMcpTools;
}

// Room beyond a tool's own timeout for the activity around it (sandbox start, reading output).
const TOOL_TIMEOUT_MARGIN_MS = 30_000;
// Tool activities heartbeat every few seconds: a worker killed mid-call is noticed this fast.
const TOOL_HEARTBEAT = '10 seconds';

/**
 * The bounds of a tool call's activity, derived from the tool's own timeout. `waitCancelled`: a
 * cancelled turn waits until the activity says it stopped (run_shell kills its command first), so
 * nothing of the call runs on once the turn has ended; otherwise the turn ends at once and the
 * activity hears of the cancellation at its next heartbeat.
 */
export function toolOptions(timeoutMs: number, waitCancelled = false): ActivityOptions {
  return {
    startToCloseTimeout: timeoutMs + TOOL_TIMEOUT_MARGIN_MS,
    heartbeatTimeout: TOOL_HEARTBEAT,
    retry: TOOL_RETRY,
    ...(waitCancelled ? { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED } : {}),
  };
}

/** The executeTool activity with a start-to-close bound derived from the tool's own timeout. */
const toolActivities = new Map<string, Activities['executeTool']>();
export function toolActivity(timeoutMs: number, waitCancelled = false): Activities['executeTool'] {
  const key = `${timeoutMs}/${waitCancelled}`;
  let fn = toolActivities.get(key);
  if (!fn) {
    fn = proxyActivities<Activities>(toolOptions(timeoutMs, waitCancelled)).executeTool;
    toolActivities.set(key, fn);
  }
  return fn;
}

/**
 * MCP calls: a server may ask the human mid-call (elicitation), so the activity may wait as long
 * as ask_user does; heartbeats still notice a lost worker within seconds. A call is retried only
 * when the server calls the tool idempotent: an external server's side effects cannot be made
 * exactly-once by the harness, so otherwise a lost worker is a result the model sees.
 */
export function mcpOptions(timeoutMs: number, askUserTimeoutMs: number, idempotent: boolean): ActivityOptions {
  return { startToCloseTimeout: timeoutMs + askUserTimeoutMs + TOOL_TIMEOUT_MARGIN_MS, heartbeatTimeout: TOOL_HEARTBEAT, retry: { ...TOOL_RETRY, maximumAttempts: idempotent ? 3 : 1 } };
}

const mcpActivities = new Map<string, Activities['executeTool']>();
export function mcpActivity(timeoutMs: number, askUserTimeoutMs: number, idempotent: boolean): Activities['executeTool'] {
  const key = `${timeoutMs}/${askUserTimeoutMs}/${idempotent}`;
  let fn = mcpActivities.get(key);
  if (!fn) {
    fn = proxyActivities<Activities>(mcpOptions(timeoutMs, askUserTimeoutMs, idempotent)).executeTool;
    mcpActivities.set(key, fn);
  }
  return fn;
}

/** MCP calls of idempotent tools, first as a local activity (see tool-runner.ts); the activity bounds them to a few seconds. */
const mcpLocalActivities = new Map<number, Activities['executeTool']>();
export function mcpLocalActivity(timeoutMs: number): Activities['executeTool'] {
  // Room for the server to start (its startup timeout is part of the call) and the ping after a timeout.
  const bound = Math.min(timeoutMs, LOCAL_CALL_BUDGET_MS) + 15_000;
  let fn = mcpLocalActivities.get(bound);
  if (!fn) {
    fn = proxyLocalActivities<Activities>({ startToCloseTimeout: bound, retry: { maximumAttempts: 3, initialInterval: '100ms', nonRetryableErrorTypes: [MCP_NEEDS_ACTIVITY] } }).executeTool;
    mcpLocalActivities.set(bound, fn);
  }
  return fn;
}

// Fast host-local tools: one attempt is a few milliseconds, so a short timeout and local retries.
export const { executeTool: executeToolLocally } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, initialInterval: '100ms' },
});
