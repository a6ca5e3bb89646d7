/**
 * The MCP activities: discovering a session's tools (once per session, and again when a server
 * says its list changed) and calling one tool. Both go through the worker's pool of clients, so
 * a server process serves every call of the session that uses it (of its agent and tenant, when
 * the server is declared shareable), never another session's.
 */
import { Context } from '@temporalio/activity';
import type { DiscoveredMcpTools, DiscoverMcpInput, ExecuteToolInput, LoadMcpToolsInput, ToolOutcome } from '../../deterministic/activity-types';
import { toolSetByRef } from '../../deterministic/mcp-tool-ref';
import { LOCAL_CALL_BUDGET_MS, MCP_NEEDS_ACTIVITY, type McpServerSpec, type McpServerStatus, type McpToolInfo, type McpToolSet } from '../../deterministic/mcp';
import type { McpScope } from '../../deterministic/mcp-scope';
import type { WorkerDeclarations } from '../declarations';
import { toolError } from '../../deterministic/errors';
import type { Conversations } from '../store/conversations';
import { withStore } from '../store/errors';
import { StoreUnavailableError } from '../store/message-store';
import { withHeartbeat } from '../heartbeat';
import { durableElicitation } from './elicit';
import { McpTimeoutError, McpUnavailableError } from './errors';
import { ApplicationFailure } from '@temporalio/common';
import type { McpPool } from './pool';
import { mcpResultToToolResult } from './results';
import { withinToolSet } from './tool-list';
import { previousSet } from './tool-set';

/**
 * What the MCP activities need: the worker's pool, the message store (the tool list is kept there
 * for model calls) and the servers the worker declared (a session only names them).
 */
export interface McpActivityDeps {
  pool: McpPool;
  conversations: Conversations;
  declarations: WorkerDeclarations;
}

/** Builds discoverMcpTools and the MCP branch of executeTool. */
export function createMcpActivities(deps: McpActivityDeps) {
  /** Lists one server's tools; a server that fails is a status with why, never an activity failure. */
  const discoverOne = async (spec: McpServerSpec, scope: McpScope, signal: AbortSignal): Promise<{ status: McpServerStatus; tools: McpToolInfo[] }> => {
    try {
      const { tools, skipped } = await deps.pool.listTools(spec, { scope, timeoutMs: spec.startupTimeoutMs, signal });
      return { status: { server: spec.name, status: 'connected', tools: tools.length, ...(skipped.length ? { skipped } : {}) }, tools };
    } catch (err) {
      if (!(err instanceof McpUnavailableError)) throw err;
      Context.current().log.warn(err.message);
      return { status: { server: spec.name, status: 'failed', error: err.message, tools: 0 }, tools: [] };
    }
  };

  return {
    /**
     * Lists the tools of the session's servers, each bounded by its own startup timeout, all at
     * once: a hung server delays session start by at most its timeout and costs only its own tools.
     */
    async discoverMcpTools(input: DiscoverMcpInput): Promise<DiscoveredMcpTools> {
      const ctx = Context.current();
      return withHeartbeat(async () => {
        const only = input.only ? new Set(input.only) : undefined;
        const scope = scopeOf(input.sessionId, input);
        // Every server resolved before any starts: a session naming one the worker did not declare
        // starts none of them (NOT_DECLARED fails the session).
        const specs = input.servers.map((ref) => deps.declarations.mcpServer(ref));
        const previous = await previousSet(deps.conversations, input);
        // The whole set within its bound (tool-list.ts): it rides in workflow inputs and results.
        const results = withinToolSet(
          await Promise.all(
            specs.map(async (spec) => {
              if (only && !only.has(spec.name)) return kept(previous.set, spec.name);
              return discoverOne(spec, scope, ctx.cancellationSignal);
            }),
          ),
        );
        const tools = results.flatMap((r) => r.tools);
        const servers = results.map((r) => r.status);
        const text = JSON.stringify(tools);
        // The same tools again: named, not repeated (tool-set.ts).
        if (previous.text === text) return { servers, tools: [], ...(input.previousRef?.ref ? { ref: input.previousRef.ref } : {}), unchanged: true };
        // The schemas travel to model calls by reference: stored once, read by the model activity.
        const ref = tools.length ? await withStore(() => deps.conversations.putText(input.sessionId, text)) : undefined;
        const set = { servers, tools, ...(ref ? { ref } : {}) };
        return input.byRef ? toolSetByRef(set) : set;
      });
    },

    /** The stored list of a tool set the session carries by reference (the turn validates calls against its schemas). */
    async loadMcpTools(input: LoadMcpToolsInput): Promise<McpToolInfo[]> {
      return withStore(async () => {
        try {
          return JSON.parse(await deps.conversations.getText(input.sessionId, input.ref)) as McpToolInfo[];
        } catch (err) {
          // A list that is not there (the session's store was cleared) will not come by retrying.
          if (err instanceof StoreUnavailableError && /missing from the store/.test(err.message)) throw ApplicationFailure.nonRetryable(err.message, 'MCP_TOOLS_MISSING');
          throw err;
        }
      });
    },

    /** One MCP tool call as a tool result; a server that is down or silent is MCP_SERVER_UNAVAILABLE. */
    async callMcpTool(input: ExecuteToolInput & { mcp: NonNullable<ExecuteToolInput['mcp']> }, args: unknown): Promise<ToolOutcome> {
      const ctx = Context.current();
      const { tool } = input.mcp;
      const scope = scopeOf(input.sessionId, input.mcp);
      let server: McpServerSpec;
      try {
        server = deps.declarations.mcpServer(input.mcp.server);
      } catch (err) {
        // A server this worker did not declare (a session from before declarations, or a turn
        // started with a forged tool set): a result the model reads, the turn goes on.
        return toolError('MCP_SERVER_UNAVAILABLE', (err as Error).message, { recoverable: false, suggestion: 'this server cannot be used in this session; continue with other tools' });
      }
      const timeoutMs = input.timeoutMs ?? server.callTimeoutMs;
      // A local activity (idempotent tools, see workflows/turn/tools.ts) cannot wait for a human nor
      // for long: a question from the server or a slow call sends it back to run as an activity.
      const local = ctx.info.isLocal;
      let back: string | undefined;
      try {
        const r = await deps.pool.callTool(server, tool, (args ?? {}) as Record<string, unknown>, {
          scope,
          timeoutMs: local ? Math.min(timeoutMs, LOCAL_CALL_BUDGET_MS) : timeoutMs,
          signal: ctx.cancellationSignal,
          onElicit: local
            ? async () => {
                back = 'the server asks the user a question';
                return { action: 'cancel' };
              }
            : durableElicitation(ctx, { turnId: input.turnId, callId: input.callId, server: server.name, timeoutMs: input.mcp.askUserTimeoutMs }),
          onActivity: () => (local ? undefined : ctx.heartbeat()),
        });
        if (back) throw needsActivity(back);
        const result = mcpResultToToolResult(server.name, tool, r);
        return deps.pool.takeListChanged(server, scope) ? { ...result, mcpListChanged: true } : result;
      } catch (err) {
        if (local && err instanceof McpTimeoutError && timeoutMs > LOCAL_CALL_BUDGET_MS) throw needsActivity(`slower than ${LOCAL_CALL_BUDGET_MS} ms`);
        if (!(err instanceof McpUnavailableError)) throw err;
        return toolError('MCP_SERVER_UNAVAILABLE', err.message, {
          suggestion: 'the server is down or not answering: try again later (the next call restarts it), or continue with other tools',
        });
      }
    },
  };
}

/** Whom a connection serves: the session, with the agent and tenant its workflow names. */
function scopeOf(sessionId: string, from: { agent?: string; tenant?: string }): McpScope {
  return { sessionId, ...(from.agent !== undefined ? { agent: from.agent } : {}), ...(from.tenant !== undefined ? { tenant: from.tenant } : {}) };
}

function needsActivity(why: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`runs as an activity: ${why}`, MCP_NEEDS_ACTIVITY);
}

/** The tools and status of a server not re-listed this time. */
function kept(previous: McpToolSet | undefined, server: string): { status: McpServerStatus; tools: McpToolInfo[] } {
  const status = previous?.servers.find((s) => s.server === server) ?? { server, status: 'failed' as const, error: 'not listed yet', tools: 0 };
  return { status, tools: (previous?.tools ?? []).filter((t) => t.server === server) };
}
