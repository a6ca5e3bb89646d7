/**
 * Where the embedded dev server listens, by default: gRPC on HARNESS_EMBEDDED_PORT (7233), the
 * Web UI 1000 above it, the HTTP API just above the UI and /metrics just above that. One place,
 * because the CLI starts the server on these ports and the worker keeps http_request away from
 * all of them.
 */

/** The Web UI port for a gRPC port. */
export function defaultUiPort(grpcPort: number): number {
  return grpcPort + 1000;
}

/** The HTTP API port for a UI port (pinned: the dev server's own default is a random port). */
export function defaultHttpPort(uiPort: number): number {
  return uiPort < 65535 ? uiPort + 1 : uiPort - 1;
}

/** The /metrics port (pinned: the dev server's own default is a random port), clear of the UI and HTTP API ports. */
export function defaultMetricsPort(uiPort: number, httpPort: number): number {
  return httpPort < 65535 && httpPort + 1 !== uiPort ? httpPort + 1 : Math.min(uiPort, httpPort) - 1;
}
