/** Error types a tool result can carry (UPPER_SNAKE; the list is in docs/architecture.md). */
export const ERROR_TYPES = [
  'INVALID_ARGUMENTS',
  'UNKNOWN_TOOL',
  'INVALID_TOOL_CALL',
  'FILE_NOT_FOUND',
  'PATH_OUTSIDE_WORKSPACE',
  'PERMISSION_DENIED',
  'APPROVAL_DENIED',
  'APPROVAL_TIMEOUT',
  'COMMAND_TIMEOUT',
  'EXECUTION_ERROR',
  'SANDBOX_UNAVAILABLE',
  'SANDBOX_HOST_LOST',
  'MCP_TOOL_ERROR',
  'MCP_SERVER_UNAVAILABLE',
  'HTTP_ERROR',
  'USER_TIMEOUT',
  'MEMORY_UNAVAILABLE',
  'MEMORY_FULL',
  'REPEATED_ACTION',
  'WORKSPACE_FULL',
  // Custom tools (defineTool): the worker that took the call lacks the tool; the tool passed its timeout;
  // the session's agent does not have the tool (the worker refuses to run it).
  'TOOL_UNAVAILABLE',
  'TOOL_TIMEOUT',
  'TOOL_NOT_ALLOWED',
  // Sub-agents (agent__<name>): past the depth or the calls a turn may make; not one of the
  // session's agent's sub-agents (the worker refuses to start it); the child turn ended without an answer.
  'SUB_AGENT_LIMIT',
  'SUB_AGENT_NOT_ALLOWED',
  'SUB_AGENT_FAILED',
] as const;

/** One of the structured tool error types. */
export type ErrorType = (typeof ERROR_TYPES)[number];

/**
 * An error type an application's own tool gives (`new ToolError(msg, { type: 'PAYMENT_DECLINED' })`):
 * UPPER_SNAKE like the harness's, a letter first, at most 64 characters.
 */
const CUSTOM_ERROR_TYPE = /^[A-Z][A-Z0-9_]{0,63}$/;

/**
 * The error type of a tool result: one of the harness's, or a custom tool's own (CUSTOM_ERROR_TYPE).
 * Code that reads results compares it with the types it knows and treats any other as a failure.
 */
export type ToolErrorType = ErrorType | (string & Record<never, never>);

/**
 * The type a result carries for the type a ToolError was given: a valid one as it is; none,
 * EXECUTION_ERROR; any other, EXECUTION_ERROR and a sentence saying why (for the worker's log and the result).
 */
export function toolErrorType(type: unknown): { type: ToolErrorType; problem?: string } {
  if (type === undefined) return { type: 'EXECUTION_ERROR' };
  if (typeof type === 'string' && CUSTOM_ERROR_TYPE.test(type)) return { type };
  const shown = typeof type === 'string' ? JSON.stringify(type.length > 80 ? `${type.slice(0, 80)}…` : type) : `a ${typeof type}`;
  return {
    type: 'EXECUTION_ERROR',
    problem: `the tool gave the error type ${shown}, which is not UPPER_SNAKE_CASE (A-Z, 0-9 and _, a letter first, at most 64 characters), so it is reported as EXECUTION_ERROR`,
  };
}

import type { ToolResult } from './types';

/**
 * What the model reads for a call the turn's cancellation left without a result; the trace
 * knows a cancelled call by it (it is in stored histories: never reword it).
 */
export const CANCELLED_CALL_MESSAGE = 'The turn was cancelled before this call finished.';

/** Builds a failed tool result; `recoverable` defaults to true because most tool errors are. */
export function toolError(
  error_type: ErrorType,
  message: string,
  opts: { recoverable?: boolean; suggestion?: string } = {},
): ToolResult {
  const out: ToolResult = { ok: false, error_type, message, recoverable: opts.recoverable ?? true };
  if (opts.suggestion) out.suggestion = opts.suggestion;
  return out;
}

/** Builds a successful tool result. */
export function toolOk(result: unknown): ToolResult {
  return { ok: true, result };
}

/**
 * The innermost non-empty message of an error's cause chain: Temporal wraps failures
 * (child workflow → activity → application), and the root names what actually went wrong.
 */
export function rootCauseMessage(err: unknown): string {
  let message = '';
  let current: unknown = err;
  for (let depth = 0; current && depth < 10; depth++) {
    const m = (current as { message?: unknown }).message;
    if (typeof m === 'string' && m.trim()) message = m;
    current = (current as { cause?: unknown }).cause;
  }
  return message || String(err);
}

/**
 * The failure type of a session that names what its worker did not declare (an MCP server, a
 * model endpoint, a skills folder): permanent, so never retried, and the session fails with it.
 */
export const NOT_DECLARED = 'NOT_DECLARED';

/**
 * The failure of a session that names an agent its worker does not have: permanent, and the
 * message names the agents the worker has.
 */
export const AGENT_UNKNOWN = 'AGENT_UNKNOWN';
/** A session that names no agent, on a worker that runs only sessions of its agents. */
export const AGENT_REQUIRED = 'AGENT_REQUIRED';

/**
 * The failure of a session whose input asks for more than its agent allows (another model, an MCP
 * server, skills folder or tool the agent does not list, a looser policy or limit): permanent, and
 * the message names the field. A session only narrows its agent, never adds to it.
 */
export const AGENT_MISMATCH = 'AGENT_MISMATCH';

/** What a NOT_DECLARED refusal's message ends with, after `: `: where the owner declares, and that a worker reads it at start. */
export const NOT_DECLARED_HINT =
  "declare it on the worker (its harness.config.json, named with --config or trusted with `harness trust`, or createHarnessWorker's options) and restart the worker (`harness dev --stop` stops the background one)";

/** A refusal's message split into the problem and its hint (the hint is empty for any other message). */
export function splitNotDeclared(message: string): { problem: string; hint: string } {
  const tail = `: ${NOT_DECLARED_HINT}`;
  return message.endsWith(tail) ? { problem: message.slice(0, -tail.length), hint: NOT_DECLARED_HINT } : { problem: message, hint: '' };
}

/** The first application failure type in an error's cause chain (Temporal wraps activity failures). */
export function failureType(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; current && depth < 10; depth++) {
    const t = (current as { type?: unknown }).type;
    if (typeof t === 'string' && t) return t;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
