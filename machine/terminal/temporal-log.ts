/**
 * Temporal's own log lines (the SDK's and its core's) in a worker, a replay or a script: an
 * activity failure quotes the error, and that can hold a model endpoint's reply, a tool's output
 * or an MCP server's words. Written through the escaping writer like everything else, in the
 * SDK's default format without its colours (those would be escaped into visible `\e[32m`).
 */
import { format } from 'node:util';
import { DefaultLogger, Runtime, type LogEntry, type LogLevel } from '@temporalio/worker';
import { writeErrLine } from './write';

/** A Temporal logger at `level` whose lines go to stderr escaped. */
export function escapingLogger(level: LogLevel = 'INFO'): DefaultLogger {
  return new DefaultLogger(level, logLine);
}

/**
 * Installs the Temporal runtime with the escaping logger, unless one is installed already (a test
 * fixture, or a command that made its own): it must come before the first connection.
 */
export function installEscapingRuntime(level: LogLevel = 'INFO'): void {
  try {
    Runtime.install({ logger: escapingLogger(level) });
  } catch {
    // Already installed: keep it.
  }
}

/** A hand-off queue's Worker (workers/handoff-queue.ts) polls activities only, by design: the SDK's warning that it has no workflows is noise. */
function byDesign(entry: LogEntry): boolean {
  return entry.message === 'No workflows registered, not polling for workflow tasks' && String(entry.meta?.taskQueue ?? '').includes('/handoff-');
}

function logLine(entry: LogEntry): void {
  if (byDesign(entry)) return;
  const date = new Date(Number(entry.timestampNanos / 1_000_000n));
  writeErrLine(entry.meta === undefined ? format(date, `[${entry.level}]`, entry.message) : format(date, `[${entry.level}]`, entry.message, entry.meta));
}
