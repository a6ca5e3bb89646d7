/**
 * Typed failures of MCP servers. The activity turns them into MCP_SERVER_UNAVAILABLE tool
 * results (the turn goes on without the server), so each message is one line that names the
 * server and why: the model and the logs both read it.
 */

/** The server cannot start, died, stopped answering or timed out. */
export class McpUnavailableError extends Error {
  override readonly name: string = 'McpUnavailableError';
  constructor(
    readonly server: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`mcp server ${server}: ${oneLine(reason)}`, options);
  }
}

/** A call that did not answer within its timeout (the server may still be alive). */
export class McpTimeoutError extends McpUnavailableError {
  override readonly name: string = 'McpTimeoutError';
}

/** The server's settings cannot be used on this worker (a `${VAR}` the worker does not set). */
export class McpConfigError extends McpUnavailableError {
  override readonly name: string = 'McpConfigError';
}

/** Why a server did not start in time, and how to give it longer (one line, as every reason). */
export function startupTimedOut(server: string, what: string): string {
  return `${what} (give it longer: mcpServers.${server}.startupTimeoutSec, in seconds)`;
}

/** Collapses whitespace so a multi-line reason (a stack, stderr) stays one line. */
export function oneLine(text: string, max = 500): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
