/**
 * The MCP servers this worker talks to: one connection per server spec and session (a server
 * declared `shareable`: per agent and tenant, pool-key.ts), shared by that session's calls (one
 * child process, not one per call), opened on first use, reopened after the server dies, and
 * closed when idle (then forgotten, so sessions that ended leave nothing behind) or at shutdown.
 * Timeouts are the pool's own: a call's clock stops while a human answers the server's
 * question (elicitation), which the SDK's request timeout cannot do.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerSpec, McpToolInfo } from '../../deterministic/mcp';
import type { McpScope } from '../../deterministic/mcp-scope';
import { McpConnection, NO_SDK_TIMEOUT, seconds, type ElicitHook, type OpenCall } from './connection';
import { forgetServer, noteServer } from './orphans';
import { poolKey } from './pool-key';
import { McpTimeoutError, McpUnavailableError, oneLine, startupTimedOut } from './errors';
import { abortable, linked, pausableTimer } from './timers';
import { ToolPageSchema, mapTools } from './tool-list';

interface McpPoolOptions {
  /** The worker's environment: `${VAR}` references are resolved from it. */
  env: Record<string, string | undefined>;
  /** A connection unused this long is closed (default 5 minutes). */
  idleMs?: number;
  log?: (line: string) => void;
  clientName?: string;
  /** Where started stdio servers are noted, so a worker after a crash can stop them (orphans.ts). */
  notesDir?: string;
}

interface CallOptions {
  /** Who the call is for: its session's connection, or the agent's of a shareable server. */
  scope: McpScope;
  timeoutMs: number;
  signal?: AbortSignal;
  onElicit?: ElicitHook;
  /** Called when the server shows signs of life (progress): a chance to heartbeat. */
  onActivity?: () => void;
}

interface Entry {
  key: string;
  spec: McpServerSpec;
  scope: McpScope;
  conn?: McpConnection;
  connecting?: Promise<McpConnection>;
  spawns: number;
  calls: number;
  busy: number;
  listChanged: boolean;
  idle?: NodeJS.Timeout;
}

const PING_MS = 2000;
const TIMEOUT = Symbol('mcp timeout');
const MAX_PAGES = 100;
// Tools read from a server before paging stops (128 can be offered; the rest are only counted).
const MAX_LISTED = 10_000;

export class McpPool {
  private readonly entries = new Map<string, Entry>();
  private readonly closing = new Set<Promise<void>>();
  private readonly idleMs: number;
  private readonly log: (line: string) => void;

  constructor(private readonly opts: McpPoolOptions) {
    this.idleMs = opts.idleMs ?? 5 * 60_000;
    this.log = opts.log ?? (() => {});
  }

  /** The server's tools (every page), mapped to qualified names; tools that cannot be offered are in `skipped`. */
  async listTools(spec: McpServerSpec, opts: { scope: McpScope; timeoutMs: number; signal?: AbortSignal }): Promise<{ tools: McpToolInfo[]; skipped: string[] }> {
    const entry = this.entry(spec, opts.scope);
    return this.use(entry, async () => {
      const ac = linked(opts.signal);
      const timer = setTimeout(() => ac.abort(TIMEOUT), opts.timeoutMs);
      let conn: McpConnection | undefined;
      try {
        conn = await abortable(this.connect(entry, opts.timeoutMs), ac.signal);
        const tools: unknown[] = [];
        let cursor: string | undefined;
        // A server without tools (only prompts or resources) is connected with none.
        for (let page = 0; conn.client.getServerCapabilities()?.tools && page < MAX_PAGES; page++) {
          const params = cursor ? { cursor } : {};
          const r = await conn.client.request({ method: 'tools/list', params }, ToolPageSchema, { signal: ac.signal, timeout: NO_SDK_TIMEOUT });
          for (const t of r.tools.slice(0, MAX_LISTED - tools.length)) tools.push(t);
          cursor = r.nextCursor;
          if (!cursor || tools.length >= MAX_LISTED) break;
        }
        conn.settled = true;
        entry.listChanged = false;
        return mapTools(spec.name, tools);
      } catch (err) {
        if (opts.signal?.aborted) throw opts.signal.reason;
        if (ac.signal.reason !== TIMEOUT) throw this.failure(entry, conn, err);
        if (conn) this.drop(entry, conn, true);
        throw new McpUnavailableError(spec.name, startupTimedOut(spec.name, `did not list its tools within ${seconds(opts.timeoutMs)}`));
      } finally {
        clearTimeout(timer);
      }
    });
  }

  /** Calls a tool; a JSON-RPC error from the server comes back as an `isError` result. */
  async callTool(spec: McpServerSpec, tool: string, args: Record<string, unknown>, opts: CallOptions): Promise<CallToolResult> {
    const entry = this.entry(spec, opts.scope);
    entry.calls++;
    return this.use(entry, async () => {
      const conn = await abortable(this.connect(entry, spec.startupTimeoutMs), opts.signal);
      const ac = linked(opts.signal);
      const timer = pausableTimer(opts.timeoutMs, () => ac.abort(TIMEOUT));
      const call: OpenCall = { ...(opts.onElicit ? { onElicit: opts.onElicit } : {}), pause: timer.pause, resume: timer.resume };
      conn.calls.add(call);
      try {
        const r = await conn.client.callTool({ name: tool, arguments: args }, undefined, {
          signal: ac.signal,
          timeout: NO_SDK_TIMEOUT,
          onprogress: () => opts.onActivity?.(),
        });
        conn.settled = true;
        return r as CallToolResult;
      } catch (err) {
        // The caller's cancellation (the SDK wraps it in an McpError) passes through as given.
        if (opts.signal?.aborted) throw opts.signal.reason;
        if (ac.signal.reason === TIMEOUT) {
          // A slow tool on a live server keeps its connection; a server that cannot even pong is restarted.
          const alive = await conn.client.ping({ timeout: PING_MS }).then(() => true, () => false);
          if (!alive) this.drop(entry, conn, true);
          throw new McpTimeoutError(spec.name, `${tool} did not answer within ${seconds(opts.timeoutMs)}${alive ? '' : ' and the server does not answer ping'}`);
        }
        if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed && err.code !== ErrorCode.RequestTimeout && !conn.closed) {
          conn.settled = true;
          return { content: [{ type: 'text', text: err.message }], isError: true };
        }
        throw this.failure(entry, conn, err);
      } finally {
        timer.clear();
        conn.calls.delete(call);
      }
    });
  }

  /** True once after the server said its tool list changed (since the last listTools). */
  takeListChanged(spec: McpServerSpec, scope: McpScope): boolean {
    const entry = this.entries.get(poolKey(spec, scope));
    const changed = entry?.listChanged ?? false;
    if (entry) entry.listChanged = false;
    return changed;
  }

  /** Closes every connection and waits for the processes to exit (worker shutdown). */
  async closeAll(): Promise<void> {
    const entries = [...this.entries.values()];
    for (const e of entries) clearTimeout(e.idle);
    await Promise.all(entries.map(async (e) => (e.connecting ? e.connecting.catch(() => undefined) : undefined)));
    for (const e of entries) if (e.conn) this.drop(e, e.conn, false);
    await Promise.all([...this.closing]);
  }

  stats(): Array<{ server: string; key: string; scope: McpScope; connected: boolean; spawns: number; calls: number; pid?: number }> {
    return [...this.entries.values()].map((e) => {
      const pid = e.conn?.pid;
      return { server: e.spec.name, key: e.key, scope: e.scope, connected: !!e.conn && !e.conn.closed, spawns: e.spawns, calls: e.calls, ...(pid ? { pid } : {}) };
    });
  }

  private entry(spec: McpServerSpec, scope: McpScope): Entry {
    const key = poolKey(spec, scope);
    let entry = this.entries.get(key);
    if (!entry) {
      entry = { key, spec, scope, spawns: 0, calls: 0, busy: 0, listChanged: false };
      this.entries.set(key, entry);
    }
    return entry;
  }

  // The open connection, or one being opened (shared by concurrent callers), or a new one.
  private connect(entry: Entry, timeoutMs: number): Promise<McpConnection> {
    if (entry.conn && !entry.conn.closed) return Promise.resolve(entry.conn);
    if (!entry.connecting) {
      entry.spawns++;
      const deps = {
        env: this.opts.env,
        clientName: this.opts.clientName ?? 'durable-agent-harness',
        log: this.log,
        onListChanged: () => (entry.listChanged = true),
        onClose: (conn: McpConnection) => {
          if (entry.conn !== conn) return;
          entry.conn = undefined;
          this.log(conn.unavailable('connection closed').message);
        },
        track: (closing: Promise<void>) => this.track(closing),
      };
      let pid: number | undefined;
      const notes = this.opts.notesDir;
      const onClose = deps.onClose;
      deps.onClose = (conn: McpConnection) => {
        if (notes && pid) forgetServer(notes, pid);
        onClose(conn);
      };
      entry.connecting = McpConnection.open(entry.spec, deps, timeoutMs)
        .then((conn) => {
          pid = conn.pid;
          if (notes && pid && !conn.closed) noteServer(notes, pid);
          return (entry.conn = conn);
        })
        .finally(() => (entry.connecting = undefined));
    }
    return entry.connecting;
  }

  // Runs one operation on an entry; the idle clock starts when the last one ends.
  private async use<T>(entry: Entry, op: () => Promise<T>): Promise<T> {
    entry.busy++;
    clearTimeout(entry.idle);
    try {
      return await op();
    } finally {
      if (--entry.busy === 0) {
        entry.idle = setTimeout(() => {
          if (entry.busy !== 0 || entry.connecting) return;
          if (entry.conn) {
            this.log(`mcp ${entry.spec.name}: closing after ${seconds(this.idleMs)} idle`);
            this.drop(entry, entry.conn, false);
          }
          // Forgotten too: a key per session would otherwise pile up for every session ever served.
          if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
        }, this.idleMs).unref();
      }
    }
  }

  private drop(entry: Entry, conn: McpConnection, hard: boolean): void {
    if (entry.conn === conn) entry.conn = undefined;
    this.track(conn.close(hard));
  }

  private track(closing: Promise<void>): void {
    const p = closing.finally(() => this.closing.delete(p));
    this.closing.add(p);
  }

  // Any other failure means the connection cannot be trusted: it is dropped, and the error names the server.
  private failure(entry: Entry, conn: McpConnection | undefined, err: unknown): unknown {
    if (err instanceof McpUnavailableError) return err;
    if (!conn) return new McpUnavailableError(entry.spec.name, oneLine(String((err as Error)?.message ?? err)), { cause: err });
    const closed = conn.closed || (err instanceof McpError && err.code === ErrorCode.ConnectionClosed);
    this.drop(entry, conn, true);
    return conn.unavailable(closed ? 'connection closed during the request' : `request failed: ${oneLine(String((err as Error)?.message ?? err), 300)}`, err);
  }
}
