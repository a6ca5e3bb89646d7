/**
 * How the turn workflow runs one tool call the loop hands it: which activity (local, per-tool
 * timeout, MCP first as a local activity when idempotent), what the request carries, and a
 * failure after the activity's retries turned into a result the model sees.
 */
import { isCancellation } from '@temporalio/workflow';
import type { ExecuteToolInput, ToolOutcome } from '../../deterministic/activity-types';
import { rootCauseMessage, toolError } from '../../deterministic/errors';
import type { TurnInput } from '../../deterministic/session';
import type { RunEvents } from './run-events';
import { executeTool, executeToolLocally, mcpActivity, mcpLocalActivity, mcpOptions, toolActivity, toolOptions } from '../activity-options';
import { hostLost, type HostRoute } from './host-route';
import type { ToolExecution } from '../turn-ops';
import type { TurnPatches } from './patches';
import type { ModelCaller } from './model-call';

/** The turn's executeTool op: one tool execution, as the turn's patches and config say. */
export function toolRunner(
  input: TurnInput,
  patches: Pick<TurnPatches, 'localTools' | 'perToolTimeouts' | 'toolFailuresAsResults' | 'messageStore' | 'since'>,
  events: RunEvents,
  dropMcpQuestions: (callId: string) => Promise<void>,
  models: Pick<ModelCaller, 'noteLocalEffect' | 'activity'>,
  route?: HostRoute,
): (call: ToolExecution) => Promise<ToolOutcome> {
  const { limits } = input.config;
  const { localTools, perToolTimeouts, toolFailuresAsResults, messageStore, since } = patches;
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
    const waitCancelled = call.name === 'run_shell' && !server && !call.custom && perToolTimeouts && since('shell-cancel-waits');
    // A session on a sandbox host runs every call there, as a regular activity (a local one would
    // run on whichever worker runs the turn, not where the workspace is).
    const hosted = route?.activity(
      server ? `mcp/${call.timeoutMs}/${mcp!.idempotent}` : `tool/${call.timeoutMs}${waitCancelled ? '/wait' : ''}`,
      server ? mcpOptions(call.timeoutMs, limits.askUserTimeoutMs, mcp!.idempotent) : toolOptions(call.timeoutMs, waitCancelled),
    );
    const activity =
      hosted ??
      (server
        ? mcpActivity(call.timeoutMs, limits.askUserTimeoutMs, mcp!.idempotent)
        : local && localTools
          ? executeToolLocally
          : perToolTimeouts
            ? toolActivity(call.timeoutMs, waitCancelled)
            : executeTool);
    const req: ExecuteToolInput = {
      sessionId: input.sessionId,
      turnId: input.turnId,
      ...call,
      ...(server ? { mcp: { server, tool: mcp!.tool, askUserTimeoutMs: limits.askUserTimeoutMs } } : {}),
      ...(messageStore ? { store: true } : {}),
      ...(input.config.memory ? { namespace: input.config.memory.namespace } : {}),
      ...(input.config.network?.allowPrivateHosts.length ? { allowPrivateHosts: input.config.network.allowPrivateHosts } : {}),
    };
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
      // Its host's worker never took the call: the session moves, and the model reads what it lost.
      if (route && hostLost(err)) return toolError('SANDBOX_HOST_LOST', await route.move(call.step), { recoverable: true, suggestion: 'run the call again if it is still needed: it did not run' });
      if (!toolFailuresAsResults || isCancellation(err)) throw err;
      const type = call.name === 'run_shell' ? 'SANDBOX_UNAVAILABLE' : server ? 'MCP_SERVER_UNAVAILABLE' : 'EXECUTION_ERROR';
      // An MCP tool not retried (the server does not call it idempotent), or a custom one that is
      // not idempotent (its claim stops a second run): it may have run before the loss.
      const unsure = (server && !mcp!.idempotent) || call.custom?.idempotent === false ? ' (it may or may not have taken effect: check before calling it again)' : '';
      return toolError(type, `${call.name} could not be run: ${rootCauseMessage(err)}${unsure}`, {
        suggestion: 'the tool infrastructure failed, not your call: try again later, or continue another way',
      });
    } finally {
      // A question the server asked during the call cannot be answered once the call is over.
      if (server) await dropMcpQuestions(call.callId);
    }
  };
}
