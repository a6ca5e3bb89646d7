/**
 * The activity-side entry point for built-in tools: look up by name, re-validate, run.
 * The workflow already validated the arguments; validating again keeps the executor safe
 * to call from anywhere (replays of old histories, other callers, schema drift).
 */
import type { z } from 'zod';
import {
  getCurrentTimeTool,
  httpRequestTool,
  listFilesTool,
  readFileTool,
  recallTool,
  rememberLongtermTool,
  runShellTool,
  useSkillTool,
  writeFileTool,
} from '../../deterministic/builtin-tools';
import type { MemoryStore } from '../memory/store';
import { memoryUnavailable, recall, rememberLongterm } from '../memory/tools';
import type { SkillCatalog } from '../skills/catalog';
import { useSkill } from '../skills/use-skill';
import { toolError } from '../../deterministic/errors';
import { describeIssues, type ToolDefinition } from '../../deterministic/tools';
import type { ToolResult } from '../../deterministic/types';
import type { Sandbox } from '../sandbox/sandbox';
import { appliedRef } from './applied-writes';
import { listFiles, readFile, writeFile } from './files';
import { httpCall } from './http-call';
import type { CallClaims } from '../store/call-claims';
import { FileCallClaims } from '../custom-tools/claims';
import type { ServiceAddress } from './net-services';
import type { OwnPortLookup } from './own-ports';
import { runShell } from './shell';
import { getCurrentTime } from './time';
import { ensureWorkspace, sessionWorkspace, WorkspaceError } from './workspace';

/** What the executor needs from the worker; the clock is injectable for tests. */
interface ToolExecutorDeps {
  home: string;
  now?: () => Date;
  httpMaxBytes?: number;
  /** Budget of each session workspace for write_file and run_shell (default 1 GiB, see workspace-usage.ts). */
  workspaceMaxBytes?: number;
  /** The worker's own services (Temporal, its UI, the memory database): http_request never reaches them. */
  workerServices?: ServiceAddress[];
  /** The worker's own listening ports (default: this process's tree, see own-ports.ts): never reached either. */
  ownPorts?: OwnPortLookup;
  /** The sandbox of a session (run_shell); absent means run_shell reports SANDBOX_UNAVAILABLE. */
  sandboxes?: (sessionId: string) => Sandbox;
  /** The skills a session can use (use_skill); absent means none. */
  skills?: (sessionId: string) => SkillCatalog;
  /** Long-term memory (remember_longterm, recall); absent means MEMORY_UNAVAILABLE. */
  memory?: () => Promise<MemoryStore>;
  /** Where http_request's claims are kept (at-most-once.ts; default: files under `home`, which hold for one host only). */
  claims?: () => Promise<CallClaims>;
}

/** One tool invocation as the activity receives it. */
export interface ToolExecutionRequest {
  sessionId: string;
  name: string;
  args: unknown;
  /** Long-term memory namespace of the session (default `default`). */
  namespace?: string;
  /** The turn and the harness-assigned call id: together they name this call for idempotency. */
  turnId?: string;
  callId?: string;
  /** `host:port` entries whose private or loopback addresses http_request may reach on that port. */
  allowPrivateHosts?: string[];
}

/** Runs built-in activity tools; always resolves to a ToolResult for tool-level failures. */
export interface ToolExecutor {
  execute(req: ToolExecutionRequest): Promise<ToolResult>;
}

interface Context {
  sessionId: string;
  /**
   * `<turnId>/<callId>` when the caller named the call: the key under which side effects are
   * recorded so a retried activity (a worker killed mid-call) applies them once. Undefined for
   * direct calls (tests, tools without side effects).
   */
  callKey?: string;
  /** Hosts whose private addresses http_request may reach (from the session config). */
  allowPrivateHosts: string[];
  /** The session workspace, created on first use so tools that need none leave no folder behind. */
  workspace(): Promise<string>;
  /** The session sandbox, if the worker has any. */
  sandbox(): Sandbox | undefined;
  /** The session's skills. */
  skills(): SkillCatalog;
  /** The memory store and the session's namespace; a ToolResult when memory is unavailable. */
  memory(): Promise<{ store: MemoryStore; namespace: string; sessionId: string } | ToolResult>;
}

interface Handler {
  def: ToolDefinition;
  run(args: unknown, ctx: Context): Promise<ToolResult> | ToolResult;
}

// Ties each handler's argument type to its definition's schema at compile time.
function handler<P extends z.ZodObject>(def: ToolDefinition<P>, run: (args: z.infer<P>, ctx: Context) => Promise<ToolResult> | ToolResult): Handler {
  return { def, run: run as Handler['run'] };
}

/** Builds the executor for the built-in tools that run outside the workflow. */
export function createToolExecutor(deps: ToolExecutorDeps): ToolExecutor {
  const now = deps.now ?? (() => new Date());
  const claims = deps.claims ?? (async () => new FileCallClaims(deps.home));
  const handlers = new Map(
    [
      handler(getCurrentTimeTool, (args) => getCurrentTime(args, now)),
      handler(readFileTool, async (args, ctx) => readFile(await ctx.workspace(), args)),
      handler(writeFileTool, async (args, ctx) => {
        const ws = await ctx.workspace();
        const r = await writeFile(ws, args, { maxBytes: deps.workspaceMaxBytes, applied: appliedRef(deps.home, ws, ctx.callKey) });
        // The file now belongs to the worker's user; the sandbox may need to hand it over.
        if (r.ok) ctx.sandbox()?.hostWrote?.();
        return r;
      }),
      handler(listFilesTool, async (args, ctx) => listFiles(await ctx.workspace(), args)),
      handler(runShellTool, async (args, ctx) => {
        const sandbox = ctx.sandbox();
        if (!sandbox) return toolError('SANDBOX_UNAVAILABLE', 'no sandbox is configured on this worker', { suggestion: 'use the file tools instead' });
        return runShell(sandbox, args, { callKey: ctx.callKey, workspace: await ctx.workspace(), workspaceMaxBytes: deps.workspaceMaxBytes });
      }),
      handler(httpRequestTool, (args, ctx) =>
        httpCall(
          args,
          {
            maxBytes: deps.httpMaxBytes,
            allowPrivateHosts: ctx.allowPrivateHosts,
            workerServices: deps.workerServices ?? [],
            ...(deps.ownPorts ? { ownPorts: deps.ownPorts } : {}),
          },
          ctx.callKey ? { claims, sessionId: ctx.sessionId, key: ctx.callKey } : undefined,
        ),
      ),
      handler(useSkillTool, (args, ctx) => useSkill(ctx.skills(), args)),
      handler(rememberLongtermTool, async (args, ctx) => {
        const m = await ctx.memory();
        return 'store' in m ? rememberLongterm(m.store, { namespace: m.namespace, sessionId: m.sessionId, ...(ctx.callKey ? { requestKey: ctx.callKey } : {}) }, args) : m;
      }),
      handler(recallTool, async (args, ctx) => {
        const m = await ctx.memory();
        return 'store' in m ? recall(m.store, { namespace: m.namespace }, args) : m;
      }),
    ].map((h) => [h.def.name, h] as const),
  );

  return {
    async execute({ sessionId, name, args, namespace, turnId, callId, allowPrivateHosts }) {
      const h = handlers.get(name);
      if (!h) {
        return toolError('UNKNOWN_TOOL', `unknown tool ${JSON.stringify(name)}`, {
          suggestion: `use one of the available tools: ${[...handlers.keys()].join(', ')}`,
        });
      }
      const parsed = h.def.parameters.safeParse(args);
      if (!parsed.success) {
        return toolError('INVALID_ARGUMENTS', `invalid arguments for ${name}: ${describeIssues(parsed.error)}`, {
          suggestion: 'fix the named fields and call the tool again',
        });
      }
      try {
        // Checked for every tool, even those without files: a bad id should surface at once.
        sessionWorkspace(deps.home, sessionId);
      } catch (err) {
        // A malformed session id is a harness bug the model cannot fix: report it, do not retry.
        if (err instanceof WorkspaceError) return toolError(err.errorType, err.message, { recoverable: false });
        throw err;
      }
      return h.run(parsed.data, {
        sessionId,
        ...(turnId && callId ? { callKey: `${turnId}/${callId}` } : {}),
        allowPrivateHosts: allowPrivateHosts ?? [],
        workspace: () => ensureWorkspace(deps.home, sessionId),
        sandbox: () => deps.sandboxes?.(sessionId),
        skills: () => deps.skills?.(sessionId) ?? { skills: [], problems: [] },
        memory: async () => {
          try {
            if (!deps.memory) throw new Error('no memory database is configured on this worker');
            return { store: await deps.memory(), namespace: namespace ?? 'default', sessionId };
          } catch (err) {
            // The host's errors already carry the "memory database unavailable:" prefix; add it only to others.
            return memoryUnavailable(err);
          }
        },
      });
    },
  };
}
