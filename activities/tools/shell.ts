/**
 * run_shell: one command in the session's sandbox container. Every outcome is a ToolResult
 * the model can act on: a failing command, a timeout or a missing Docker never fail the turn.
 *
 * A call with a key (`<turnId>/<callId>`) runs at most once: a retried activity gets the first
 * run's outcome (see activities/sandbox/exec-record.ts). The workspace budget: commands are
 * never refused up front, so the model can always delete files, but a command that takes the
 * workspace over its budget (or makes an already full one bigger) is stopped while it runs, and
 * every result says WORKSPACE_FULL while the workspace is over budget.
 *
 * A call the turn cancels is killed in the container (every process of the command), and the
 * activity ends as cancelled. Only a cancellation the workflow asked for kills: a worker shutting
 * down also cancels its activities, but then the command runs on and the call's next attempt
 * follows it through its exec record.
 */
import { CancelledFailure, Context } from '@temporalio/activity';
import type { z } from 'zod';
import type { runShellTool } from '../../deterministic/builtin-tools';
import { toolError, toolOk } from '../../deterministic/errors';
import type { ToolResult } from '../../deterministic/types';
import { SandboxError } from '../sandbox/docker-errors';
import type { Sandbox } from '../sandbox/sandbox';
import type { ExecResult } from '../sandbox/exec-record';
import { DEFAULT_WORKSPACE_MAX_BYTES, workspaceUsage } from './workspace-usage';

/** Validated arguments of run_shell. */
type RunShellArgs = z.infer<typeof runShellTool.parameters>;

/** What runShell needs besides the sandbox; without them a call runs unkeyed and unbudgeted. */
interface RunShellOptions {
  /** `<turnId>/<callId>`: the command runs at most once for it. */
  callKey?: string | undefined;
  /** The session workspace, whose usage is checked during and after each command. */
  workspace?: string;
  /** Its budget in bytes (default DEFAULT_WORKSPACE_MAX_BYTES). */
  workspaceMaxBytes?: number | undefined;
  /** Aborted when the call is cancelled (default: when the running activity's workflow cancels it). */
  cancel?: AbortSignal | undefined;
}

/** Tries of an unavailable sandbox before SANDBOX_UNAVAILABLE. */
export const SANDBOX_ATTEMPTS = 3;

/** Timeout when the model gives none. */
const DEFAULT_SHELL_TIMEOUT_MS = 60_000;
// Enough of stderr for the model to see what failed without repeating the whole output.
const STDERR_SUMMARY_CHARS = 500;
const DELETE_SUGGESTION =
  'delete files that are no longer needed (e.g. run_shell "rm -r build/ big.log") and continue; commands still run while the workspace is full, but one that makes it bigger is stopped';

// Usage of each workspace after its last command: the starting point of the next one's watch.
const lastUsage = new Map<string, number>();
const LAST_USAGE_MAX = 1_000;

/**
 * Runs the command; the result holds {exit_code, stdout, stderr, truncated, duration_ms} on
 * success and on failure. A cancelled call throws the cancellation's reason once the command is
 * killed (nobody reads a result then).
 */
export async function runShell(sandbox: Sandbox, args: RunShellArgs, opts: RunShellOptions = {}): Promise<ToolResult> {
  const cancel = opts.cancel ?? cancelledByWorkflow();
  cancel?.throwIfAborted();
  const timeoutMs = args.timeout_ms ?? DEFAULT_SHELL_TIMEOUT_MS;
  const budget = opts.workspace ? { root: opts.workspace, maxBytes: opts.workspaceMaxBytes ?? DEFAULT_WORKSPACE_MAX_BYTES } : undefined;
  let stopIf: (() => Promise<boolean>) | undefined;
  if (budget) {
    // Stop a command that grows the workspace past the budget, or past where it already was.
    const limit = Math.max(budget.maxBytes, lastUsage.get(budget.root) ?? (await usageOf(budget.root)));
    stopIf = async () => (await workspaceUsage(budget.root)).bytes > limit;
  }
  let r: ExecResult | undefined;
  // A daemon restarting or a container being recreated is often gone in a moment: a few
  // quick tries before telling the model, bounded so a dead Docker costs about a second.
  // Only failures before the command started are retried: after that a retry could run it twice.
  for (let attempt = 1; !r; attempt++) {
    try {
      r = await sandbox.exec(args.command, { timeoutMs, ...(opts.callKey !== undefined ? { key: opts.callKey } : {}), ...(stopIf ? { stopIf } : {}), ...(cancel ? { cancel } : {}) });
    } catch (err) {
      if (!(err instanceof SandboxError)) throw err;
      if (err.started) {
        return toolError('SANDBOX_UNAVAILABLE', `${err.message}; the command may have run, partly or fully`, {
          suggestion: 'check the workspace (list_files, read_file) before running the command again',
        });
      }
      if (attempt >= SANDBOX_ATTEMPTS) {
        return toolError('SANDBOX_UNAVAILABLE', `${err.message} (after ${attempt} attempts)`, {
          suggestion: 'the sandbox is not available right now; use the file tools, or try run_shell again later',
        });
      }
      await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
      cancel?.throwIfAborted();
    }
  }
  if (r.cancelled && cancel?.aborted) throw cancel.reason ?? new CancelledFailure('cancelled');
  const outcome = toResult(r, timeoutMs, sandbox.fileSizeLimitBytes);
  if (!budget) return outcome;
  const used = await usageOf(budget.root);
  if (used <= budget.maxBytes && !r.stopped) return outcome;
  const state = `the workspace uses ${bytes(used)}, over its budget of ${bytes(budget.maxBytes)}`;
  const what = r.stopped
    ? `the command was stopped because it made the workspace grow past its budget (${state})`
    : `${state}; ${outcome.ok ? 'the command itself succeeded' : outcome.message}`;
  return { ...toolError('WORKSPACE_FULL', what, { suggestion: DELETE_SUGGESTION }), ...(outcome.result !== undefined ? { result: outcome.result } : {}) };
}

/** The tool result of one finished (or interrupted) command. */
function toResult(r: ExecResult, timeoutMs: number, fileSizeLimit: number | undefined): ToolResult {
  const result: Record<string, unknown> = {
    exit_code: r.interrupted ? null : r.exitCode,
    stdout: r.stdout,
    stderr: r.stderr,
    truncated: r.truncated,
    duration_ms: Math.round(r.durationMs),
  };
  if (r.truncated) result.dropped_bytes = r.droppedBytes;
  if (r.cancelled) {
    // Read back from the record by a later attempt of a call that was cancelled.
    return { ...toolError('EXECUTION_ERROR', 'the command was cancelled and killed before it finished', { suggestion: 'check the workspace for what it did before running it again' }), result };
  }
  if (r.interrupted) {
    return {
      ...toolError(
        'EXECUTION_ERROR',
        'an earlier run of this call was interrupted (the sandbox or the worker restarted while the command ran); it may have partly happened, so it was not run again',
        { suggestion: 'check the workspace for what the command did before running it again' },
      ),
      result,
    };
  }
  if (r.timedOut) {
    return {
      ...toolError('COMMAND_TIMEOUT', `command killed after ${timeoutMs} ms (timeout)`, {
        suggestion: 'run a shorter or narrower command, or raise timeout_ms (max 600000)',
      }),
      result,
    };
  }
  if (r.exitCode !== 0) {
    return { ...toolError('EXECUTION_ERROR', `command exited with code ${r.exitCode}${summary(r, fileSizeLimit)}`), result };
  }
  return toolOk(result);
}

/** ": <last stderr lines>", or a hint for the signals the sandbox limits send. */
function summary(r: ExecResult, fileSizeLimit: number | undefined): string {
  const err = r.stderr.trim();
  const limit = fileSizeLimit ? ` of ${bytes(fileSizeLimit)}` : '';
  const hint =
    r.exitCode === 137
      ? ' (killed by SIGKILL: e.g. the sandbox memory limit)'
      : r.exitCode === 153
        ? ` (killed by SIGXFSZ: a file reached the sandbox file-size limit${limit}; write smaller files)`
        : '';
  if (!err) return hint;
  const tail = err.length > STDERR_SUMMARY_CHARS ? `…${err.slice(-STDERR_SUMMARY_CHARS)}` : err;
  return `${hint}: ${tail}`;
}

/**
 * The running activity's cancellation, when its workflow asked for it (a turn cancelled); none
 * outside an activity (tests, direct use of the executor) or for other reasons the SDK cancels
 * an activity (a worker shutting down, a heartbeat that found the call gone or timed out).
 */
function cancelledByWorkflow(): AbortSignal | undefined {
  let ctx: Context;
  try {
    ctx = Context.current();
  } catch {
    return undefined;
  }
  const out = new AbortController();
  const signal = ctx.cancellationSignal;
  const asked = () => {
    const reason: unknown = signal.reason;
    if (ctx.cancellationDetails?.cancelRequested || (reason instanceof CancelledFailure && reason.message === 'CANCELLED')) out.abort(reason);
  };
  if (signal.aborted) asked();
  else signal.addEventListener('abort', asked, { once: true });
  return out.signal;
}

/** Walks the workspace and remembers the figure for the next command's watch. */
async function usageOf(root: string): Promise<number> {
  const { bytes: used } = await workspaceUsage(root);
  if (lastUsage.size >= LAST_USAGE_MAX && !lastUsage.has(root)) lastUsage.delete(lastUsage.keys().next().value!);
  lastUsage.set(root, used);
  return used;
}

/** "1.5 GiB", "300 KiB", "12 bytes". */
function bytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} bytes` : `${Number(v.toFixed(1))} ${units[i]}`;
}
