/**
 * How the turn workflow runs one tool call the loop hands it: the activities tools run through,
 * with their timeouts and retry policies (one place says how long each kind of call may take and
 * when it is retried); which of them a call takes (local, per-tool timeout, MCP first as a local
 * activity when idempotent, on the session's sandbox host); what the request carries; and a
 * failure after the activity's retries turned into a result the model sees.
 */
import { ActivityCancellationType, isCancellation, proxyActivities, proxyLocalActivities, type ActivityOptions } from '@temporalio/workflow';
import type { ExecuteToolInput, ToolOutcome } from '../../deterministic/activity-types';
import { rootCauseMessage, toolError } from '../../deterministic/errors';
import { LOCAL_CALL_BUDGET_MS, MCP_NEEDS_ACTIVITY } from '../../deterministic/mcp';
import { mcpScopeOf } from '../../deterministic/mcp-scope';
import type { TurnInput } from '../../deterministic/session';
import { TOOL_HEARTBEAT, TOOL_RETRY, TOOL_TIMEOUT_MARGIN_MS, type Activities } from '../activity-options';
import type { RunEvents } from './run-events';
import type { HostRoute } from './host-route';
import { hostLost, type OnHost } from '../sandbox-host';
import type { ToolExecution } from './loop';
import type { TurnPatches } from './patches';
import type { ModelCaller } from './model-call';

/**
 * The bounds of a tool call's activity, derived from the tool's own timeout. `waitCancelled`: a
 * cancelled turn waits until the activity says it stopped (run_shell kills its command first), so
 * nothing of the call runs on once the turn has ended; otherwise the turn ends at once and the
 * activity hears of the cancellation at its next heartbeat.
 */
function toolOptions(timeoutMs: number, waitCancelled = false): ActivityOptions {
  return {
    startToCloseTimeout: timeoutMs + TOOL_TIMEOUT_MARGIN_MS,
    heartbeatTimeout: TOOL_HEARTBEAT,
    retry: TOOL_RETRY,
    ...(waitCancelled ? { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED } : {}),
  };
}

const toolActivities = new Map<string, Activities['executeTool']>();
/** The executeTool activity with a start-to-close bound derived from the tool's own timeout. */
function toolActivity(timeoutMs: number, waitCancelled = false): Activities['executeTool'] {
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
function mcpOptions(timeoutMs: number, askUserTimeoutMs: number, idempotent: boolean): ActivityOptions {
  return { startToCloseTimeout: timeoutMs + askUserTimeoutMs + TOOL_TIMEOUT_MARGIN_MS, heartbeatTimeout: TOOL_HEARTBEAT, retry: { ...TOOL_RETRY, maximumAttempts: idempotent ? 3 : 1 } };
}

const mcpActivities = new Map<string, Activities['executeTool']>();
/** The executeTool activity of an MCP call, with mcpOptions' bounds. */
function mcpActivity(timeoutMs: number, askUserTimeoutMs: number, idempotent: boolean): Activities['executeTool'] {
  const key = `${timeoutMs}/${askUserTimeoutMs}/${idempotent}`;
  let fn = mcpActivities.get(key);
  if (!fn) {
    fn = proxyActivities<Activities>(mcpOptions(timeoutMs, askUserTimeoutMs, idempotent)).executeTool;
    mcpActivities.set(key, fn);
  }
  return fn;
}

const mcpLocalActivities = new Map<number, Activities['executeTool']>();
/** MCP calls of idempotent tools, first as a local activity (see toolRunner below); the activity bounds them to a few seconds. */
function mcpLocalActivity(timeoutMs: number): Activities['executeTool'] {
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
const { executeTool: executeToolLocally } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '30s',
  retry: { maximumAttempts: 3, initialInterval: '100ms' },
});

/** The turn's executeTool op: one tool execution, as the turn's patches and config say. */
export function toolRunner(
  input: TurnInput,
  patches: Pick<TurnPatches, 'messageStore' | 'since'>,
  events: RunEvents,
  dropMcpQuestions: (callId: string) => Promise<void>,
  models: Pick<ModelCaller, 'noteLocalEffect' | 'activity'>,
  route: HostRoute,
): (call: ToolExecution) => Promise<ToolOutcome> {
  const { limits } = input.config;
  const { messageStore, since } = patches;
  const mcpServers = input.config.mcp?.servers ?? [];
  return async ({ local, mcp, readOnly, ...call }: ToolExecution): Promise<ToolOutcome> => {
    // A local activity that may change something (even one that failed): the next model call
    // records its marker first (model-call.ts).
    const runLocally = <T>(run: () => Promise<T>): Promise<T> => {
      if (!readOnly) models.noteLocalEffect();
      events.add('local');
      return run();
    };
    const server = mcp && mcpServers.find((s) => s.name === mcp.server);
    // run_shell kills its command when the turn is cancelled: the turn waits for that. Turns
    // recorded before ended at once (a history of one would end differently: a patch).
    const waitCancelled = call.name === 'run_shell' && !server && !call.custom && since('shell-cancel-waits');
    const req: ExecuteToolInput = {
      sessionId: input.sessionId,
      turnId: input.turnId,
      ...call,
      // An MCP call names its session's agent and tenant (a shareable server's process is theirs): no command changes, so no patch.
      ...(server ? { mcp: { server, tool: mcp!.tool, askUserTimeoutMs: limits.askUserTimeoutMs, ...mcpScopeOf(input.config) } } : {}),
      ...(messageStore ? { store: true } : {}),
      ...(input.config.memory ? { namespace: input.config.memory.namespace } : {}),
      ...(input.config.network?.allowPrivateHosts.length ? { allowPrivateHosts: input.config.network.allowPrivateHosts } : {}),
      // Only a custom tool's call carries the session's metadata (ctx.metadata): no command changes, so no patch.
      ...(call.custom && input.config.metadata ? { metadata: input.config.metadata } : {}),
      // An agent's session runs only its agent's tools: the worker checks the call against the agent it declares.
      ...(call.custom && input.config.agent !== undefined ? { agent: input.config.agent } : {}),
    };
    const run = async (onHost?: OnHost): Promise<ToolOutcome> => {
      // A session on a sandbox host runs every call there, as a regular activity (a local one would
      // run on whichever worker runs the turn, not where the workspace is).
      const hosted =
        onHost &&
        route.activity(
          server ? `mcp/${call.timeoutMs}/${mcp!.idempotent}` : `tool/${call.timeoutMs}${waitCancelled ? '/wait' : ''}`,
          server ? mcpOptions(call.timeoutMs, limits.askUserTimeoutMs, mcp!.idempotent) : toolOptions(call.timeoutMs, waitCancelled),
          onHost,
        );
      const activity =
        hosted ?? (server ? mcpActivity(call.timeoutMs, limits.askUserTimeoutMs, mcp!.idempotent) : local ? executeToolLocally : toolActivity(call.timeoutMs, waitCancelled));
      try {
        // Tools the server calls idempotent run as local activities (no server round trip, so an
        // MCP step costs what a built-in one does); one that asks the user or is slow runs again
        // as a regular activity, which a retry of an idempotent tool allows.
        // (Not for a session on a host: its MCP servers run on that host only.)
        if (server && mcp!.idempotent && !hosted) {
          try {
            return await runLocally(() => mcpLocalActivity(call.timeoutMs)(req));
          } catch (err) {
            // Sent back (a question, a slow call), or the local attempts failed: the activity decides.
            if (isCancellation(err)) throw err;
          }
        }
        if (activity === executeToolLocally) return await runLocally(() => activity(req));
        return await models.activity(() => activity(req));
      } catch (err) {
        // Its host's worker never took the call: route.run moves the session (below).
        if (onHost && hostLost(err)) throw err;
        if (isCancellation(err)) throw err;
        const type = call.name === 'run_shell' ? 'SANDBOX_UNAVAILABLE' : server ? 'MCP_SERVER_UNAVAILABLE' : 'EXECUTION_ERROR';
        // An MCP tool not retried (the server does not call it idempotent), or a custom one that is
        // not idempotent (its claim stops a second run): it may have run before the loss.
        const unsure = (server && !mcp!.idempotent) || call.custom?.idempotent === false ? ' (it may or may not have taken effect: check before calling it again)' : '';
        return toolError(type, `${call.name} could not be run: ${rootCauseMessage(err)}${unsure}`, {
          suggestion: 'the tool infrastructure failed, not your call: try again later, or continue another way',
        });
      }
    };
    try {
      // A lost host: the session moves, and the model reads what it lost.
      return await route.run(run, async (lost) => toolError('SANDBOX_HOST_LOST', await route.move(call.step, lost), { recoverable: true, suggestion: 'run the call again if it is still needed: it did not run' }));
    } finally {
      // A question the server asked during the call cannot be answered once the call is over.
      if (server) await dropMcpQuestions(call.callId);
    }
  };
}
