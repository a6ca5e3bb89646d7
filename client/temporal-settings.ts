/**
 * Where Temporal is, read from the environment. Apart from client/temporal.ts (which connects and
 * loads the Temporal SDK) so that the CLI can hold its settings without loading the SDK: `--help`
 * and commands that never connect stay cheap to start.
 */
import { readFileSync } from 'node:fs';
import { defaultHttpPort, defaultMetricsPort, defaultUiPort } from '../deterministic/ports';
import { UsageError } from '../machine/errors';

/** Resolved connection settings. */
export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  /** True when no TEMPORAL_ADDRESS is set: the harness may start its own dev server. */
  embedded: boolean;
  embeddedPort: number;
  uiPort: number;
  /** The embedded server's HTTP API (kept out of reach of http_request like the others). */
  httpPort: number;
  /** The embedded server's /metrics (pinned for the same reason). */
  metricsPort: number;
  tls?: { clientCertPair?: { crt: Buffer; key: Buffer }; serverNameOverride?: string } | true;
  apiKey?: string;
}

/**
 * Reads the settings from the environment (TEMPORAL_*, HARNESS_TASK_QUEUE, HARNESS_EMBEDDED_PORT,
 * HARNESS_UI_PORT, HARNESS_HTTP_PORT, HARNESS_METRICS_PORT). A bad value is a UsageError naming
 * the variable; callers read the settings only when a command needs them, so `--help` works
 * whatever the environment says.
 */
export function temporalSettings(env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  const embeddedPort = portVariable(env, 'HARNESS_EMBEDDED_PORT') ?? 7233;
  const uiPort = portVariable(env, 'HARNESS_UI_PORT') ?? defaultUiPort(embeddedPort);
  if (uiPort > 65535) {
    throw new UsageError(`HARNESS_EMBEDDED_PORT=${embeddedPort} leaves no room for the Web UI on port + 1000`, 'set HARNESS_UI_PORT to a free port as well');
  }
  const httpPort = portVariable(env, 'HARNESS_HTTP_PORT') ?? defaultHttpPort(uiPort);
  const metricsPort = portVariable(env, 'HARNESS_METRICS_PORT') ?? defaultMetricsPort(uiPort, httpPort);
  const apiKey = env.TEMPORAL_API_KEY || undefined;
  let tls: TemporalSettings['tls'];
  const cert = env.TEMPORAL_TLS_CERT || undefined;
  const key = env.TEMPORAL_TLS_KEY || undefined;
  if (cert || key) {
    if (!cert || !key) {
      const [set, unset] = cert ? ['TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY'] : ['TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_CERT'];
      throw new UsageError(`${set} is set but ${unset} is not`, 'a client certificate needs both files (PEM): set both, or neither');
    }
    tls = {
      clientCertPair: { crt: readTlsFile('TEMPORAL_TLS_CERT', cert), key: readTlsFile('TEMPORAL_TLS_KEY', key) },
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
    httpPort,
    metricsPort,
    ...(tls ? { tls } : {}),
    ...(apiKey ? { apiKey } : {}),
  };
}

/** A port from the environment (unset or empty: undefined). */
function portVariable(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const port = Number(raw.trim());
  if (!/^\d+$/.test(raw.trim()) || port < 1 || port > 65535) {
    throw new UsageError(`${name}=${raw} is not a port number`, `use a whole number from 1 to 65535, or unset ${name}`);
  }
  return port;
}

function readTlsFile(name: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EACCES' ? 'permission denied' : e.code === 'EISDIR' ? 'a directory' : (e.code ?? e.message);
    throw new UsageError(`cannot read ${name}=${file}: ${why}`, `point ${name} at a PEM file, or unset it`);
  }
}
