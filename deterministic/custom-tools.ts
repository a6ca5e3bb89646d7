/**
 * Tools a worker adds in TypeScript (the public `defineTool`, api/define-tool.ts): what a tool
 * is, what its code is given, and how a session keeps the list. The list a worker offers is
 * recorded once per session (the first turn's prepareTurn result, kept by the session and given
 * to every later turn), so every turn and every replay judge calls against the same tools; the
 * workflow rebuilds a zod schema from each tool's recorded JSON schema, deterministically, as it
 * does for MCP tools. Pure: the code that runs a tool lives on the worker (activities/custom-tools).
 */
import type { z } from 'zod';
import type { ToolErrorType } from './errors';
import type { SessionMetadata } from './metadata';
import type { ToolDefinition } from './tools';
import type { Risk, ToolSpec } from './types';
import { zodInputSchema } from './mcp-tools';

/** The source of every custom tool (`local`, `skill` and `mcp:<server>` are the others). */
const CUSTOM_SOURCE = 'custom';

/** A custom tool as a session records it: data only, no code. */
export interface CustomToolSpec {
  name: string;
  description: string;
  /** The JSON schema of the arguments, derived from the tool's zod schema. */
  parameters: Record<string, unknown>;
  risk: Risk;
  timeoutMs: number;
  /** Whether a call may run twice (a retry after a lost worker); a tool that is not idempotent runs at most once. */
  idempotent: boolean;
  /** Safe to run together with the step's other such calls (only present when true: lists recorded before have none). */
  parallel?: boolean;
}

/** The custom tools of a session: listed by the worker that prepared its first turn, fixed from then on. */
export interface CustomToolSet {
  tools: CustomToolSpec[];
  /** The worker that listed them (host, pid, task queue): named when a tool the session needs is missing. */
  worker: string;
  /** The same list in the message store: model calls name it instead of carrying the schemas. */
  ref?: string;
}

/** What a tool's `run` gets besides its arguments. Nothing of the worker's environment: only what the worker gave this tool. */
export interface ToolContext {
  /** The session's workspace folder on the worker (absolute; the files read_file and write_file see). */
  workspace: string;
  sessionId: string;
  /** `<session>/turn-N`. */
  turnId: string;
  /** The harness's id of this call (`t<turn>-s<step>-c<index>`): with turnId, unique in the session. */
  callId: string;
  /** Tells Temporal the call is alive, with optional progress details (the harness also beats on its own). */
  heartbeat(details?: unknown): void;
  /** Aborted when the call passes its timeout or the turn is cancelled: stop work and return. */
  signal: AbortSignal;
  /** The worker's log, each line naming the tool and the call. */
  log: ToolLogger;
  /** Exactly the values the worker's `secrets` option gave this tool (empty without). */
  secrets: Readonly<Record<string, string>>;
  /**
   * The session's metadata: the JSON the application gave `send({ metadata })` when it started
   * the session (a user id, a tenant …; empty without). The model never sees it.
   */
  metadata: Readonly<SessionMetadata>;
}

/** Log lines of a tool call (the worker's activity log). */
export interface ToolLogger {
  debug(message: string, attrs?: Record<string, unknown>): void;
  info(message: string, attrs?: Record<string, unknown>): void;
  warn(message: string, attrs?: Record<string, unknown>): void;
  error(message: string, attrs?: Record<string, unknown>): void;
}

/** A tool defined with `defineTool`: its description for the model and policy, and its code. */
export interface HarnessTool<S extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly description: string;
  readonly schema: S;
  readonly risk: Risk;
  readonly timeoutSec: number;
  readonly idempotent: boolean;
  /** Whether its calls may run at the same time as the other calls of their step that are safe to run together. */
  readonly parallel: boolean;
  /** The result is any JSON value (it becomes `{ ok: true, result }`); throw ToolError for a failure the model should read. */
  run(args: z.output<S>, ctx: ToolContext): unknown;
  /** The recorded form (JSON schema derived from `schema`). */
  readonly spec: CustomToolSpec;
}

/**
 * A failure a tool reports to the model: `{ ok: false, error_type, message, recoverable, suggestion }`.
 * `type` is one of the harness's error types or the application's own (`PAYMENT_DECLINED`:
 * UPPER_SNAKE, a letter first, at most 64 characters); any other is reported as EXECUTION_ERROR,
 * the result's message and the worker's log saying why.
 */
export class ToolError extends Error {
  override name = 'ToolError';
  readonly type: ToolErrorType;
  readonly suggestion?: string;
  readonly recoverable: boolean;

  constructor(message: string, opts: { type?: ToolErrorType; suggestion?: string; recoverable?: boolean } = {}) {
    super(message);
    this.type = opts.type ?? 'EXECUTION_ERROR';
    if (opts.suggestion !== undefined) this.suggestion = opts.suggestion;
    this.recoverable = opts.recoverable ?? true;
  }
}

/** The tools as definitions for the turn's registry: validated like MCP tools (patterns left to the worker, which checks the real schema again). */
export function customToolDefinitions(set: CustomToolSet | undefined, taken: ReadonlySet<string> = new Set()): ToolDefinition[] {
  // A name a later release gave a built-in is skipped rather than failing every workflow task.
  return (set?.tools ?? []).filter((t) => !taken.has(t.name)).map(customToolDefinition);
}

function customToolDefinition(spec: CustomToolSpec): ToolDefinition {
  return {
    name: spec.name,
    description: spec.description,
    ...zodInputSchema(spec.parameters, true),
    risk: spec.risk,
    source: CUSTOM_SOURCE,
    timeoutMs: spec.timeoutMs,
    runsIn: 'activity',
    idempotent: spec.idempotent,
    ...(spec.parallel === true ? { parallel: true } : {}),
  };
}

/** A custom tool as the model sees it (the recorded JSON schema). */
export function customToolView(spec: CustomToolSpec): ToolSpec {
  return { name: spec.name, description: spec.description, parameters: spec.parameters, risk: spec.risk, source: CUSTOM_SOURCE, timeoutMs: spec.timeoutMs };
}

/** The required tools the set lacks. */
export function missingTools(set: CustomToolSet | undefined, required: readonly string[] | undefined): string[] {
  const have = new Set((set?.tools ?? []).map((t) => t.name));
  return (required ?? []).filter((name) => !have.has(name));
}

/** Why a session cannot run with this set: the tools it needs, the worker that lacks them, and what to do. */
export function missingToolsMessage(missing: readonly string[], set: CustomToolSet | undefined): string {
  const has = set?.tools.length ? set.tools.map((t) => t.name).join(', ') : 'no custom tools';
  return (
    `this session needs the tool(s) ${missing.join(', ')}, which the worker that prepared its first turn ` +
    `(${set?.worker ?? 'unknown'}) does not have (it has ${has}); start a worker with ` +
    `createHarnessWorker({ tools: [...] }) giving it those tools on that task queue, then send the message again`
  );
}
