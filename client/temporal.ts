/**
 * Where Temporal is and how to connect: TEMPORAL_ADDRESS (a cluster) or the embedded dev
 * server on 127.0.0.1. Namespace, TLS and API key come from the environment.
 */
import { createConnection } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection, Client } from '@temporalio/client';
// Type only: the worker SDK (a native module, ~0.5 s to load) is loaded by connectWorker alone,
// so the CLI's client commands never pay for it.
import type { NativeConnection } from '@temporalio/worker';
import { UserError } from '../machine/errors';
import { observingInterceptors } from './grpc-status';
import type { TemporalSettings } from './temporal-settings';


function connectOptions(s: TemporalSettings) {
  return { address: s.address, ...(s.tls ? { tls: s.tls } : {}), ...(s.apiKey ? { apiKey: s.apiKey } : {}) };
}

/**
 * A client's channel reconnects at most 5 s apart: grpc-js backs off up to two minutes by
 * default, so a server back after a minute's outage could go unnoticed for another minute. It
 * takes messages up to 128 MB, which the SDK means to set but names without grpc-js's `grpc.`
 * prefix: at grpc-js's 4 MB, a page of a long history was an error (history/read-history.ts).
 */
const RECONNECT = { 'grpc.initial_reconnect_backoff_ms': 500, 'grpc.max_reconnect_backoff_ms': 5_000, 'grpc.max_receive_message_length': 128 * 1024 * 1024 };

/** How long connectClient keeps trying by default: long enough for a loaded or restarting server. */
export const CONNECT_PATIENCE_MS = 15_000;

/** How connectClient retries. */
export interface ConnectOptions {
  /** Keep trying for this long (default CONNECT_PATIENCE_MS). */
  retryForMs?: number;
  /** Told once, when trying has taken more than a couple of seconds. */
  say?: (line: string) => void;
  /**
   * The caller rides out an unreachable or failing server itself (a command that waits, see
   * client/trouble-wait.ts): a client is returned without a round trip, unless nothing listens at the
   * embedded server's port, which nobody will start by waiting.
   */
  lazy?: boolean;
}

/**
 * A client, or a one-line error saying the server is not reachable. `identity` (user@host for
 * the CLI) is what Temporal records with every update and signal this client sends: the trace
 * reads who answered or approved from there, never from a field of the request.
 *
 * A server that is slow to answer (a loaded machine, a cluster restarting) is tried again with
 * backoff for `retryForMs`, saying so after two seconds. Only the embedded server gives up at
 * once when nothing listens on its port: it is ours, on this machine, and it is not starting.
 */
export async function connectClient(s: TemporalSettings, timeoutMs = 5_000, identity?: string, opts: ConnectOptions = {}): Promise<Client> {
  const started = Date.now();
  const deadline = started + (opts.retryForMs ?? CONNECT_PATIENCE_MS);
  let backoff = 250;
  let said = false;
  let reason = '';
  // The SDK's retries plus a record of what they hid, for waits to name (client/grpc-status.ts).
  const client = (connection: Connection, bind: (c: Connection) => void) => {
    bind(connection);
    return new Client({ connection, namespace: s.namespace, ...(identity ? { identity } : {}) });
  };
  for (;;) {
    // A plain TCP connect tells "nothing listens" at once, where a gRPC connect waits out its deadline.
    const tcp = await tcpProbe(s.address, Math.min(timeoutMs, Math.max(deadline - Date.now(), 1_000)));
    if (tcp === 'refused' || tcp === 'unresolved') {
      reason = tcp === 'refused' ? 'connection refused' : 'host not found';
      if (s.embedded) break;
    }
    if (opts.lazy) {
      const observing = observingInterceptors();
      return client(Connection.lazy({ ...connectOptions(s), channelArgs: RECONNECT, interceptors: observing.interceptors }), observing.bind);
    }
    if (tcp !== 'refused' && tcp !== 'unresolved') {
      try {
        const observing = observingInterceptors();
        const connection = await Connection.connect({
          ...connectOptions(s),
          connectTimeout: Math.min(timeoutMs, Math.max(deadline - Date.now(), 1_000)),
          channelArgs: RECONNECT,
          interceptors: observing.interceptors,
        });
        return client(connection, observing.bind);
      } catch (err) {
        reason = (err as Error).message.split('\n')[0] ?? String(err);
      }
    }
    if (Date.now() + backoff >= deadline) break;
    if (!said && Date.now() + backoff - started >= 2_000) {
      said = true;
      const patience = Math.round((deadline - started) / 1000);
      opts.say?.(`waiting for Temporal at ${s.address} (${reason}); trying for up to ${patience >= 120 ? `${Math.round(patience / 60)} min` : `${patience} s`} …`);
    }
    await sleep(backoff);
    backoff = Math.min(backoff * 2, 2_000);
  }
  throw new UserError(
    `cannot reach Temporal at ${s.address}: ${reason}`,
    s.embedded
      ? 'start it with `harness dev`, or just use `harness run`, which starts it in the background'
      : 'check TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE / TLS settings), or unset it to use the embedded dev server',
  );
}

/** What a TCP connect to `host:port` found; `unknown` when the address is not host:port. */
export type TcpProbe = 'open' | 'refused' | 'timeout' | 'unresolved' | 'unknown';

/** Opens and closes a TCP connection to the address: cheap, and immune to a busy server process. */
export function tcpProbe(address: string, timeoutMs: number): Promise<TcpProbe> {
  const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(address);
  if (!m) return Promise.resolve('unknown');
  return new Promise((resolve) => {
    const socket = createConnection({ host: m[1]!, port: Number(m[2]) });
    const done = (result: TcpProbe) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done('timeout'), timeoutMs);
    socket.once('connect', () => done('open'));
    socket.once('error', (err: NodeJS.ErrnoException) =>
      done(err.code === 'ECONNREFUSED' ? 'refused' : err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN' ? 'unresolved' : 'unknown'),
    );
  });
}

/** The worker-side connection. */
export async function connectWorker(s: TemporalSettings): Promise<NativeConnection> {
  const { NativeConnection } = await import('@temporalio/worker');
  return NativeConnection.connect(connectOptions(s));
}

/** True when a Temporal frontend answers at the address. */
export async function isReachable(s: TemporalSettings, timeoutMs = 1_000): Promise<boolean> {
  try {
    const c = await Connection.connect({ ...connectOptions(s), connectTimeout: timeoutMs });
    await c.close();
    return true;
  } catch {
    return false;
  }
}
