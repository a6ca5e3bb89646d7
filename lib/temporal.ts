/**
 * Where Temporal is and how to connect: TEMPORAL_ADDRESS (a cluster) or the embedded dev
 * server on 127.0.0.1. Namespace, TLS and API key come from the environment.
 */
import { readFileSync } from 'node:fs';
import { Connection, Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { UserError } from './errors';

/** Resolved connection settings. */
export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  /** True when no TEMPORAL_ADDRESS is set: the harness may start its own dev server. */
  embedded: boolean;
  embeddedPort: number;
  uiPort: number;
  tls?: { clientCertPair?: { crt: Buffer; key: Buffer }; serverNameOverride?: string } | true;
  apiKey?: string;
}

/** Reads the settings from the environment (TEMPORAL_*, HARNESS_TASK_QUEUE, HARNESS_EMBEDDED_PORT). */
export function temporalSettings(env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  const embeddedPort = Number(env.HARNESS_EMBEDDED_PORT || 7233);
  const uiPort = Number(env.HARNESS_UI_PORT || embeddedPort + 1000);
  const apiKey = env.TEMPORAL_API_KEY || undefined;
  let tls: TemporalSettings['tls'];
  if (env.TEMPORAL_TLS_CERT && env.TEMPORAL_TLS_KEY) {
    tls = {
      clientCertPair: { crt: readFileSync(env.TEMPORAL_TLS_CERT), key: readFileSync(env.TEMPORAL_TLS_KEY) },
      ...(env.TEMPORAL_TLS_SERVER_NAME ? { serverNameOverride: env.TEMPORAL_TLS_SERVER_NAME } : {}),
    };
  } else if (apiKey || env.TEMPORAL_TLS === '1' || env.TEMPORAL_TLS === 'true') {
    tls = true;
  }
  return {
    address: env.TEMPORAL_ADDRESS || `127.0.0.1:${embeddedPort}`,
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    taskQueue: env.HARNESS_TASK_QUEUE || 'harness',
    embedded: !env.TEMPORAL_ADDRESS,
    embeddedPort,
    uiPort,
    ...(tls ? { tls } : {}),
    ...(apiKey ? { apiKey } : {}),
  };
}

function connectOptions(s: TemporalSettings) {
  return { address: s.address, ...(s.tls ? { tls: s.tls } : {}), ...(s.apiKey ? { apiKey: s.apiKey } : {}) };
}

/**
 * A client, or a one-line error saying the server is not reachable. `identity` (user@host for
 * the CLI) is what Temporal records with every update and signal this client sends: the trace
 * reads who answered or approved from there, never from a field of the request.
 */
export async function connectClient(s: TemporalSettings, timeoutMs = 5_000, identity?: string): Promise<Client> {
  try {
    const connection = await Connection.connect({ ...connectOptions(s), connectTimeout: timeoutMs });
    return new Client({ connection, namespace: s.namespace, ...(identity ? { identity } : {}) });
  } catch (err) {
    throw new UserError(
      `cannot reach Temporal at ${s.address}: ${(err as Error).message.split('\n')[0]}`,
      s.embedded
        ? 'start it with `harness dev`, or just use `harness run`, which starts it in the background'
        : 'check TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE / TLS settings), or unset it to use the embedded dev server',
    );
  }
}

/** The worker-side connection. */
export async function connectWorker(s: TemporalSettings): Promise<NativeConnection> {
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
