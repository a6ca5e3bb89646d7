/**
 * run_shell: one command in the session's sandbox container. Every outcome is a ToolResult
 * the model can act on: a failing command, a timeout or a missing Docker never fail the turn.
 */
import type { z } from 'zod';
import type { runShellTool } from '../../common/builtin-tools';
import { toolError, toolOk } from '../../common/errors';
import type { ToolResult } from '../../common/types';
import { SandboxError } from '../sandbox/docker-errors';
import type { ExecResult, Sandbox } from '../sandbox/docker-sandbox';

/** Validated arguments of run_shell. */
export type RunShellArgs = z.infer<typeof runShellTool.parameters>;

/** Tries of an unavailable sandbox before SANDBOX_UNAVAILABLE. */
export const SANDBOX_ATTEMPTS = 3;

/** Timeout when the model gives none. */
export const DEFAULT_SHELL_TIMEOUT_MS = 60_000;
// Enough of stderr for the model to see what failed without repeating the whole output.
const STDERR_SUMMARY_CHARS = 500;

/** Runs the command; the result holds {exit_code, stdout, stderr, truncated, duration_ms} on success and on failure. */
export async function runShell(sandbox: Sandbox, args: RunShellArgs): Promise<ToolResult> {
  const timeoutMs = args.timeout_ms ?? DEFAULT_SHELL_TIMEOUT_MS;
  let r: ExecResult | undefined;
  // A daemon restarting or a container being recreated is often gone in a moment: a few
  // quick tries before telling the model, bounded so a dead Docker costs about a second.
  for (let attempt = 1; !r; attempt++) {
    try {
      r = await sandbox.exec(args.command, { timeoutMs });
    } catch (err) {
      if (!(err instanceof SandboxError)) throw err;
      if (attempt >= SANDBOX_ATTEMPTS) {
        return toolError('SANDBOX_UNAVAILABLE', `${err.message} (after ${attempt} attempts)`, {
          suggestion: 'the sandbox is not available right now; use the file tools, or try run_shell again later',
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    }
  }
  const result: Record<string, unknown> = {
    exit_code: r.exitCode,
    stdout: r.stdout,
    stderr: r.stderr,
    truncated: r.truncated,
    duration_ms: Math.round(r.durationMs),
  };
  if (r.truncated) result.dropped_bytes = r.droppedBytes;
  if (r.timedOut) {
    return {
      ...toolError('COMMAND_TIMEOUT', `command killed after ${timeoutMs} ms (timeout)`, {
        suggestion: 'run a shorter or narrower command, or raise timeout_ms (max 600000)',
      }),
      result,
    };
  }
  if (r.exitCode !== 0) {
    return { ...toolError('EXECUTION_ERROR', `command exited with code ${r.exitCode}${summary(r)}`), result };
  }
  return toolOk(result);
}

/** ": <last stderr lines>", or a hint for the signals the sandbox limits send. */
function summary(r: ExecResult): string {
  const err = r.stderr.trim();
  const oom = r.exitCode === 137 ? ' (killed by SIGKILL: e.g. the sandbox memory limit)' : '';
  if (!err) return oom;
  const tail = err.length > STDERR_SUMMARY_CHARS ? `…${err.slice(-STDERR_SUMMARY_CHARS)}` : err;
  return `${oom}: ${tail}`;
}
