/**
 * OTLP endpoints: the URL given to `harness trace --otlp` or read from OTEL_EXPORTER_OTLP_*.
 * Apart from history/trace/otlp.ts, which loads the OpenTelemetry exporter: the CLI checks a URL
 * when it parses its arguments, and `--help` should not load OpenTelemetry for that.
 */

/** Why an endpoint is not usable, for the CLI's usage error. */
export class EndpointError extends Error {}

/** An http(s) URL, or an EndpointError saying why not. */
function httpUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new EndpointError(`not a URL: ${value}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EndpointError(`expected an http:// or https:// URL, not ${url.protocol}`);
  return url;
}

/**
 * The traces URL of an OTLP base URL (`http://127.0.0.1:6006` → `…/v1/traces`), as
 * OTEL_EXPORTER_OTLP_ENDPOINT means it; a URL that already ends in /v1/traces is kept.
 */
export function otlpTracesUrl(value: string): URL {
  const url = httpUrl(value);
  const base = url.pathname.replace(/\/+$/, '');
  url.pathname = base.endsWith('/v1/traces') ? base : `${base}/v1/traces`;
  return url;
}

/**
 * The endpoint the environment names, as the OpenTelemetry SDKs read it: the traces URL as is
 * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), else the base URL plus /v1/traces; none when unset.
 */
export function endpointFromEnv(env: NodeJS.ProcessEnv): URL | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return httpUrl(traces);
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? otlpTracesUrl(base) : undefined;
}

/** A URL fit to print: without user name and password. */
export function shownUrl(url: URL): string {
  const u = new URL(url.href);
  u.username = '';
  u.password = '';
  return u.href;
}
