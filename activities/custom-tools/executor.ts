/**
 * The worker side of custom tools (defineTool): the list a session records, and one call run
 * the way the built-ins run: arguments checked again with the tool's own zod schema (the
 * workflow checked the JSON-schema form, which has no refinements or transforms), the tool's
 * timeout and the turn's cancellation as an abort signal, failures as structured results, and
 * for a tool that is not idempotent a claim before its code runs (tools/at-most-once.ts).
 */
import os from 'node:os';
import { Context } from '@temporalio/activity';
import { BUILTIN_TOOLS } from '../../deterministic/builtin-tools';
import { ToolError, type CustomToolSet, type HarnessTool, type ToolContext } from '../../deterministic/custom-tools';
import { toolError, toolErrorType, toolOk } from '../../deterministic/errors';
import { describeIssues, ToolDefinitionError } from '../../deterministic/tools';
import type { ExecuteToolInput } from '../../deterministic/activity-types';
import type { ToolResult } from '../../deterministic/types';
import type { SessionMetadata } from '../../deterministic/metadata';
import { ensureWorkspace } from '../tools/workspace';
import { atMostOnce } from '../tools/at-most-once';
import type { CallClaims } from '../store/call-claims';
import { FileCallClaims } from './claims';

/** What the worker was given: its tools and, per tool name, the only secrets that tool sees. */
interface CustomToolDeps {
  home: string;
  tools: readonly HarnessTool[];
  secrets?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Where calls of tools that are not idempotent are claimed (default: files under `home`, which hold for one host only). */
  claims?: () => Promise<CallClaims>;
}

/** The worker's custom tools; building it checks the list (names unique, none a built-in's). */
export function createCustomTools(deps: CustomToolDeps) {
  const byName = checkedTools(deps.tools);
  for (const name of Object.keys(deps.secrets ?? {})) {
    if (!byName.has(name)) throw new ToolDefinitionError(`secrets are given for "${name}", which is not one of the worker's tools (${[...byName.keys()].join(', ') || 'none'})`);
  }
  const claims = deps.claims ?? (async () => new FileCallClaims(deps.home));
  const where = () => `${os.hostname()} pid ${process.pid}, task queue ${Context.current().info.taskQueue}`;

  return {
    /** The list a session records (schemas stored once: model calls name them by `ref`); `only`: an agent's tools. */
    async list(store: (text: string) => Promise<string>, only?: readonly string[]): Promise<CustomToolSet> {
      const tools = [...byName.values()].filter((t) => !only || only.includes(t.name)).map((t) => t.spec);
      return { tools, worker: where(), ...(tools.length ? { ref: await store(JSON.stringify(tools)) } : {}) };
    },

    /** One call; every failure of the tool is a result, only the worker's own trouble throws. */
    async execute(input: ExecuteToolInput, args: unknown): Promise<ToolResult> {
      const tool = byName.get(input.name);
      if (!tool) {
        return toolError(
          'TOOL_UNAVAILABLE',
          `The tool ${input.name} is not on the worker that took this call (${where()}): the session recorded it when it started, ` +
            `but this worker was started without it. Run a worker that has it (createHarnessWorker({ tools: [...] })) on this task queue.`,
          { suggestion: `Continue without ${input.name}, or tell the user it is unavailable until a worker that has it runs.`, recoverable: false },
        );
      }
      const parsed = tool.schema.safeParse(args);
      if (!parsed.success) {
        return toolError('INVALID_ARGUMENTS', `invalid arguments for ${tool.name}: ${describeIssues(parsed.error)}`, { suggestion: 'fix the named fields and call the tool again' });
      }
      const once = !(input.custom?.idempotent ?? tool.idempotent);
      const run = async () => invoke(tool, parsed.data, await toolContext(tool, input, deps), once, input.timeoutMs ?? tool.spec.timeoutMs);
      return once ? atMostOnce({ claims, sessionId: input.sessionId, key: `${input.turnId}/${input.callId}` }, tool.name, run) : run();
    },
  };
}

function checkedTools(tools: readonly HarnessTool[]): Map<string, HarnessTool> {
  const builtin = new Set(BUILTIN_TOOLS.map((t) => t.name));
  const byName = new Map<string, HarnessTool>();
  for (const t of tools) {
    if (!t || typeof t.run !== 'function' || !t.spec) throw new ToolDefinitionError('every tool must come from defineTool({ name, description, schema, risk, run, ... })');
    if (builtin.has(t.name)) throw new ToolDefinitionError(`tool "${t.name}" has the name of a built-in tool`);
    if (byName.has(t.name)) throw new ToolDefinitionError(`tool "${t.name}" is given twice`);
    byName.set(t.name, t);
  }
  return byName;
}

/** The context the tool's code gets: nothing of the worker but what was given to this tool. */
async function toolContext(tool: HarnessTool, input: ExecuteToolInput, deps: CustomToolDeps): Promise<Omit<ToolContext, 'signal'>> {
  const activity = Context.current();
  const prefix = `tool ${tool.name} (${input.callId}): `;
  const log = activity.log;
  return {
    workspace: await ensureWorkspace(deps.home, input.sessionId),
    sessionId: input.sessionId,
    turnId: input.turnId,
    callId: input.callId,
    heartbeat: (details?: unknown) => activity.heartbeat(details),
    log: {
      debug: (m, a) => log.debug(prefix + m, a),
      info: (m, a) => log.info(prefix + m, a),
      warn: (m, a) => log.warn(prefix + m, a),
      error: (m, a) => log.error(prefix + m, a),
    },
    secrets: Object.freeze({ ...(deps.secrets?.[tool.name] ?? {}) }),
    // A copy per call: what one call changes is not what the next one reads.
    metadata: Object.freeze(input.metadata ? (JSON.parse(JSON.stringify(input.metadata)) as SessionMetadata) : {}),
  };
}

class ToolTimeout extends Error {}

/** Runs the tool's code within its timeout; its value or its failure becomes a result. */
async function invoke(tool: HarnessTool, args: unknown, base: Omit<ToolContext, 'signal'>, once: boolean, timeoutMs: number): Promise<ToolResult> {
  const activity = Context.current();
  const abort = new AbortController();
  const cancelled = () => abort.abort(activity.cancellationSignal.reason);
  if (activity.cancellationSignal.aborted) cancelled();
  activity.cancellationSignal.addEventListener('abort', cancelled);
  const timer = setTimeout(() => abort.abort(new ToolTimeout()), timeoutMs);
  const stopped = new Promise<never>((_, reject) => abort.signal.addEventListener('abort', () => reject(abort.signal.reason)));
  stopped.catch(() => undefined);
  try {
    const value = await Promise.race([Promise.resolve().then(() => tool.run(args as Record<string, unknown>, { ...base, signal: abort.signal })), stopped]);
    return asJson(tool.name, value);
  } catch (err) {
    if (abort.signal.reason instanceof ToolTimeout) {
      const still = once ? '; it may still take effect (it was not stopped, only told to stop)' : '';
      return toolError('TOOL_TIMEOUT', `${tool.name} did not finish within ${timeoutMs / 1000} s${still}`, {
        suggestion: once ? 'check whether it took effect before calling it again' : 'try again with a smaller request, or continue another way',
      });
    }
    if (activity.cancellationSignal.aborted) throw err; // the turn was cancelled: Temporal records it
    if (isToolError(err)) return fromToolError(tool.name, err);
    return toolError('EXECUTION_ERROR', `${tool.name} failed: ${(err as Error)?.message ?? String(err)}`, { suggestion: 'try other arguments, or continue another way' });
  } finally {
    clearTimeout(timer);
    activity.cancellationSignal.removeEventListener('abort', cancelled);
  }
}

/** A ToolError, also one from another copy of the package (instanceof would miss it). */
function isToolError(err: unknown): err is ToolError {
  if (err instanceof ToolError) return true;
  const e = err as Partial<ToolError> | undefined;
  return e?.name === 'ToolError' && typeof e.message === 'string' && typeof e.recoverable === 'boolean';
}

/** The result of a ToolError: its own type (the harness's or the application's), or EXECUTION_ERROR saying why the type was not taken. */
function fromToolError(name: string, err: ToolError): ToolResult {
  const { type, problem } = toolErrorType(err.type);
  if (problem) Context.current().log.warn(`tool ${name}: ${problem}`);
  const opts = { recoverable: err.recoverable, ...(err.suggestion ? { suggestion: err.suggestion } : {}) };
  // toolError takes the harness's own types only (a typo there is a bug): an application's is set after.
  return { ...toolError('EXECUTION_ERROR', problem ? `${err.message} (${problem})` : err.message, opts), error_type: type };
}

/** The tool's value as the JSON the model reads (a Date becomes its string; undefined, null). */
function asJson(name: string, value: unknown): ToolResult {
  try {
    return toolOk(value === undefined ? null : JSON.parse(JSON.stringify(value)));
  } catch (err) {
    return toolError('EXECUTION_ERROR', `${name} returned a value that is not JSON (${(err as Error).message})`, { recoverable: false });
  }
}
