/**
 * The worker's own services as http_request must see them: found from the worker's environment
 * (Temporal, its UI, HTTP API and metrics, the memory database, the trace receiver), so the
 * guard (net-guard.ts) can refuse them whatever the session's config allows.
 */
import { parseHostEntry } from '../../deterministic/allow-hosts';
import { defaultHttpPort, defaultMetricsPort, defaultUiPort } from '../../deterministic/ports';

/** A service of the worker itself (Temporal, its UI, the memory database): never reachable from http_request. */
export interface ServiceAddress {
  host: string;
  port: number;
  /** What it is, for the error message. */
  name: string;
}

/**
 * The worker's own services from its environment: TEMPORAL_ADDRESS, the embedded dev server,
 * its Web UI, HTTP API and metrics (HARNESS_EMBEDDED_PORT, HARNESS_UI_PORT, HARNESS_HTTP_PORT,
 * HARNESS_METRICS_PORT, defaults as in client/temporal.ts), the host:port of DATABASE_URL and the
 * OTLP receiver turns are exported to (it holds every exported trace). Listed by address, so
 * remote ones count too; local ports are also found by own-ports.ts.
 */
export function workerServices(env: Record<string, string | undefined>): ServiceAddress[] {
  const embeddedPort = Number(env.HARNESS_EMBEDDED_PORT || 7233);
  const uiPort = Number(env.HARNESS_UI_PORT || defaultUiPort(embeddedPort));
  const httpPort = Number(env.HARNESS_HTTP_PORT || defaultHttpPort(uiPort));
  const metricsPort = Number(env.HARNESS_METRICS_PORT || defaultMetricsPort(uiPort, httpPort));
  const services: ServiceAddress[] = [
    { host: '127.0.0.1', port: embeddedPort, name: 'Temporal server' },
    { host: '127.0.0.1', port: uiPort, name: 'Temporal Web UI' },
    { host: '127.0.0.1', port: httpPort, name: 'Temporal HTTP API' },
    { host: '127.0.0.1', port: metricsPort, name: 'Temporal metrics' },
  ];
  const temporal = env.TEMPORAL_ADDRESS ? parseHostEntry(env.TEMPORAL_ADDRESS) : undefined;
  if (temporal) services.push({ host: temporal.host, port: temporal.port ?? 7233, name: 'Temporal server' });
  const db = env.DATABASE_URL ? databaseHost(env.DATABASE_URL) : undefined;
  if (db) services.push({ host: db.host, port: db.port ?? 5432, name: 'memory database' });
  for (const name of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) {
    const receiver = env[name]?.trim() ? httpHost(env[name]!.trim()) : undefined;
    if (receiver) services.push({ ...receiver, name: 'trace receiver (OTLP)' });
  }
  return services;
}

/** host and port (scheme default when absent) of an http(s) URL, or undefined when it is not one. */
function httpHost(text: string): { host: string; port: number } | undefined {
  try {
    const url = new URL(text);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return { host: url.hostname, port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80 };
  } catch {
    return undefined;
  }
}

/** host and port of a postgres:// URL (postgres: is not a special scheme, so its host is normalised here). */
function databaseHost(databaseUrl: string): { host: string; port?: number } | undefined {
  try {
    const url = new URL(databaseUrl);
    // No host means a Unix socket (or libpq's default), which http_request cannot reach.
    if (!url.hostname) return undefined;
    return parseHostEntry(url.port ? `${url.hostname}:${url.port}` : url.hostname);
  } catch {
    return undefined; // a libpq keyword string: the memory host reports it
  }
}
