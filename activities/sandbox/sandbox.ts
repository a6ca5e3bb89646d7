/**
 * What the tools see of a sandbox: run a command, make sure the place exists, remove it. Kept
 * apart from DockerSandbox so the tools and their tests depend on the contract, not on Docker.
 */
import type { ExecResult } from './exec-record';


/** Per-stream output cap when the caller gives none. */
export const DEFAULT_MAX_OUTPUT_BYTES = 20_000;

/** How to run one command. */
export interface ExecOptions {
  timeoutMs: number;
  maxOutputBytes?: number;
  /** Names the call (`<turnId>/<callId>`): the command runs at most once per key, across workers. */
  key?: string;
  /** Asked every few seconds while the command runs; true kills it (the result says `stopped`). */
  stopIf?: () => Promise<boolean>;
  /**
   * Aborted when the call is cancelled: every process of the command is killed in the container
   * (not only the host's wait on it) and the result says `cancelled`.
   */
  cancel?: AbortSignal;
}

/** A place to run shell commands for one session. */
export interface Sandbox {
  exec(cmd: string, opts: ExecOptions): Promise<ExecResult>;
  ensure(): Promise<void>;
  remove(): Promise<void>;
  /** Host tools changed workspace files; lets the sandbox hand them to its user before the next command. */
  hostWrote?(): void;
  /** The largest file a command may write (for messages), when the sandbox has such a limit. */
  readonly fileSizeLimitBytes?: number;
}
