/**
 * One live MCP session: a client and its transport (a child process over stdio, or a
 * Streamable HTTP session), with what the pool needs to know about it: whether it is still
 * open, the last lines the process wrote to stderr (they say why a server failed), and the
 * calls open on it (a server's elicitation request is answered by the call that caused it).
 */
import { existsSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ElicitRequestSchema, ErrorCode, McpError, ToolListChangedNotificationSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerSpec } from '../../deterministic/mcp';
import { McpUnavailableError, oneLine, startupTimedOut } from './errors';
import { resolveTemplates } from './templates';

/** A form the server wants a human to fill in, and the human's answer. */
export interface ElicitationRequest {
  message: string;
  requestedSchema: Record<string, unknown>;
}
export interface ElicitationAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}
export type ElicitHook = (req: ElicitationRequest) => Promise<ElicitationAnswer>;

/** A tool call in flight: its elicitation hook, and its timer (stopped while a human answers). */
export interface OpenCall {
  onElicit?: ElicitHook;
  pause(): void;
  resume(): void;
}

interface ConnectionDeps {
  /** The worker's environment: only `${VAR}` references read it, the child never sees it whole. */
  env: Record<string, string | undefined>;
  clientName: string;
  log: (line: string) => void;
  /** The server said its tool list changed (after its startup, see `settled`). */
  onListChanged: () => void;
  /** The transport closed (process exit, HTTP session gone, or close()). */
  onClose: (conn: McpConnection) => void;
  /** A close in progress that nobody awaits (a failed start): shutdown waits for it. */
  track: (closing: Promise<void>) => void;
}

// setTimeout's largest delay; SDK request timeouts are ours to enforce, not the SDK's.
export const NO_SDK_TIMEOUT = 2_147_483_647;
const STDERR_LINES = 5;

export class McpConnection {
  readonly client: Client;
  readonly calls = new Set<OpenCall>();
  closed = false;
  /**
   * False until a request after initialize has answered. A server may announce tool changes
   * while it starts (server-everything registers tools once it knows the client): those belong
   * to the list the first discovery reads, so they do not count as a change.
   */
  settled = false;
  private readonly transport: Transport;
  private readonly stderrTail: string[] = [];
  private closing?: Promise<void>;
  private startedPid?: number;

  private constructor(
    readonly spec: McpServerSpec,
    private readonly deps: ConnectionDeps,
  ) {
    this.transport = this.makeTransport();
    this.client = new Client({ name: deps.clientName, version: '1.0.0' }, { capabilities: { elicitation: {} } });
    this.client.onclose = () => {
      this.closed = true;
      deps.onClose(this);
    };
    this.client.onerror = (err) => deps.log(`mcp ${spec.name}: ${oneLine(err.message, 300)}`);
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (this.settled) deps.onListChanged();
    });
    this.client.setRequestHandler(ElicitRequestSchema, (req) => this.elicit(req.params));
  }

  /** Starts the server and completes initialize within `timeoutMs`; on failure nothing is left running. */
  static async open(spec: McpServerSpec, deps: ConnectionDeps, timeoutMs: number): Promise<McpConnection> {
    const conn = new McpConnection(spec, deps);
    const ac = new AbortController();
    const timer = setTimeout(() => {
      // The SDK forgets the child as soon as connect fails; remember it so close(true) can signal it.
      conn.startedPid = conn.pid;
      ac.abort(conn.unavailable(startupTimedOut(spec.name, `did not start within ${seconds(timeoutMs)}`)));
    }, timeoutMs);
    try {
      await conn.client.connect(conn.transport, { signal: ac.signal, timeout: NO_SDK_TIMEOUT });
      return conn;
    } catch (err) {
      deps.track(conn.close(true));
      throw conn.startFailure(err);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The child's pid (stdio only, while it runs). */
  get pid(): number | undefined {
    return this.transport instanceof StdioClientTransport ? (this.transport.pid ?? undefined) : undefined;
  }

  /** An McpUnavailableError for this server, with the end of its stderr when there is any. */
  unavailable(why: string, cause?: unknown): McpUnavailableError {
    const tail = this.stderrTail.join(' | ');
    return new McpUnavailableError(this.spec.name, tail ? `${why} (stderr: ${oneLine(tail, 300)})` : why, { cause });
  }

  /**
   * Closes the session; `hard` (a server that hung or failed) signals the process at once
   * instead of waiting for it to exit on closed stdin. Safe to call more than once.
   */
  close(hard = false): Promise<void> {
    this.closing ??= (async () => {
      const pid = this.pid ?? (this.closed ? undefined : this.startedPid);
      if (hard && pid) {
        try {
          process.kill(pid, 'SIGTERM');
        } catch {
          // Already gone.
        }
      }
      if (this.transport instanceof StreamableHTTPClientTransport && this.transport.sessionId && !hard) {
        // Tell the server the session is over; a server that does not answer is not waited for.
        await Promise.race([this.transport.terminateSession().catch(() => {}), delay(1000)]);
      }
      await this.client.close().catch(() => {});
      this.closed = true;
    })();
    return this.closing;
  }

  private makeTransport(): Transport {
    const spec = this.spec;
    if (spec.transport === 'http') {
      const headers = resolveTemplates(spec.headers, this.deps.env, spec.name, 'header');
      return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers } });
    }
    const env = { ...getDefaultEnvironment(), ...resolveTemplates(spec.env, this.deps.env, spec.name, 'env') };
    const transport = new StdioClientTransport({ command: spec.command, args: spec.args, env, stderr: 'pipe', ...(spec.cwd ? { cwd: spec.cwd } : {}) });
    let partial = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop()!.slice(-1000);
      for (const line of lines) if (line.trim()) this.stderrTail.push(line.trim().slice(0, 300));
      this.stderrTail.splice(0, Math.max(0, this.stderrTail.length - STDERR_LINES));
    });
    return transport;
  }

  // Why a start failed, in the words an operator needs (a missing command, an early exit).
  private startFailure(err: unknown): McpUnavailableError {
    if (err instanceof McpUnavailableError) return err;
    const e = err as { code?: unknown; message?: unknown };
    const spec = this.spec;
    if (spec.transport === 'stdio' && (e.code === 'ENOENT' || e.code === 'EACCES')) {
      if (e.code === 'ENOENT' && spec.cwd && !existsSync(spec.cwd)) return this.unavailable(`working directory ${spec.cwd} does not exist`, err);
      return this.unavailable(`cannot start ${spec.command}: ${e.code === 'ENOENT' ? 'command not found' : 'permission denied'} (${e.code})`, err);
    }
    if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) {
      return this.unavailable(spec.transport === 'stdio' ? 'exited during startup' : 'closed the connection during startup', err);
    }
    // fetch says only "fetch failed"; its cause has the code (ECONNREFUSED, ENOTFOUND …).
    const cause = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
    const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : undefined;
    return this.unavailable(`cannot connect: ${oneLine(String(e.message ?? err), 300)}${detail ? ` (${oneLine(detail, 100)})` : ''}`, err);
  }

  // One open call with a hook gets the question; anything else cannot be attributed to a
  // session (calls of several sessions share the connection), so the server hears "decline".
  private async elicit(params: { message: string; mode?: string; requestedSchema?: unknown }): Promise<ElicitResult> {
    const open = [...this.calls];
    const call = open.length === 1 ? open[0] : undefined;
    if (!call?.onElicit || params.mode === 'url') {
      const why = params.mode === 'url' ? 'url mode is not supported' : open.length === 0 ? 'no call is open' : open.length > 1 ? `${open.length} calls are open` : 'the call has no way to ask';
      this.deps.log(`mcp ${this.spec.name}: declined an elicitation request: ${why}`);
      return { action: 'decline' };
    }
    call.pause();
    try {
      const answer = await call.onElicit({ message: params.message, requestedSchema: (params.requestedSchema ?? {}) as Record<string, unknown> });
      return answer as ElicitResult;
    } catch (err) {
      this.deps.log(`mcp ${this.spec.name}: elicitation hook failed, cancelling: ${oneLine(String((err as Error)?.message ?? err), 200)}`);
      return { action: 'cancel' };
    } finally {
      call.resume();
    }
  }
}

/** `1.5s`, `30s`: durations in messages. */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))}s`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
