/**
 * `harness trace --otlp <url>` and the export `harness dev` does: sends a trace's spans to an
 * OpenTelemetry receiver over OTLP/HTTP with protobuf bodies (OTLP's default encoding; Arize
 * Phoenix takes no other). The exporter is made per export and shut down after it, so
 * nothing stays open once a command is done.
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { UserError } from '../../machine/errors';
import { toOtelSpans } from './otlp-spans';
import type { Span } from './types';
import { shownUrl } from './otlp-endpoint';


const SERVICE_NAME = 'durable-agent-harness';

/** Spans per request: a long session stays within receivers' body limits (4 MiB is common). */
const BATCH = 256;

/**
 * The resource of exported spans: `service.name=durable-agent-harness`, plus what
 * OTEL_RESOURCE_ATTRIBUTES adds (e.g. `openinference.project.name=harness` picks the Phoenix
 * project; without it spans land in Phoenix's `default`).
 */
export function traceResource(env: NodeJS.ProcessEnv): Resource {
  const extra: Record<string, string> = {};
  for (const pair of (env.OTEL_RESOURCE_ATTRIBUTES ?? '').split(',')) {
    const i = pair.indexOf('=');
    if (i <= 0) continue;
    try {
      extra[decodeURIComponent(pair.slice(0, i).trim())] = decodeURIComponent(pair.slice(i + 1).trim());
    } catch {
      // A malformed pair is skipped, as the OpenTelemetry SDKs do.
    }
  }
  return resourceFromAttributes({ ...extra, [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME || SERVICE_NAME });
}

/** What an export did: spans sent, and spans left out because they still run. */
interface ExportCount {
  sent: number;
  running: number;
}

/**
 * Sends the spans that have ended to `url` (a traces URL). A receiver that cannot be reached or
 * answers other than 2xx is a UserError (one line and a hint). The exporter retries what OTLP
 * calls retryable (refused connections, 429, 503 …) within its timeout (10 s, or
 * OTEL_EXPORTER_OTLP_TIMEOUT).
 */
export async function exportSpans(spans: readonly Span[], url: URL, env: NodeJS.ProcessEnv): Promise<ExportCount> {
  const otel = toOtelSpans(spans, traceResource(env));
  const count = { sent: otel.length, running: spans.length - otel.length };
  if (!otel.length) return count;
  const exporter = new OTLPTraceExporter({ url: url.href });
  try {
    for (let i = 0; i < otel.length; i += BATCH) {
      const result = await send(exporter, otel.slice(i, i + BATCH));
      if (result.code !== ExportResultCode.SUCCESS) throw exportError(url, result.error);
    }
  } finally {
    await exporter.shutdown().catch(() => undefined);
  }
  return count;
}

/** The line a successful export prints. */
export function exportedLine(id: string, url: URL, count: ExportCount): string {
  const running = count.running ? ` (${count.running} still running, not exported: export again once the turn has closed)` : '';
  return `exported ${count.sent} spans of ${id} to ${shownUrl(url)}${running}`;
}

function send(exporter: OTLPTraceExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

/** What went wrong, in one line: the HTTP status the receiver gave, or the network error. */
function exportError(url: URL, error: Error | undefined): UserError {
  const shown = shownUrl(url);
  const e = (error ?? {}) as Error & { code?: unknown; data?: unknown };
  if (typeof e.code === 'number') {
    const body = typeof e.data === 'string' ? e.data.replace(/\s+/g, ' ').trim().slice(0, 200) : '';
    return new UserError(
      `the OTLP receiver at ${shown} answered ${e.code}${e.message ? ` ${e.message}` : ''}${body && body !== e.message ? `: ${body}` : ''}`,
      e.code === 404 || e.code === 405 ? 'give the base URL of an OTLP/HTTP receiver (e.g. http://127.0.0.1:6006 for Phoenix); /v1/traces is added' : 'check that it is an OTLP/HTTP receiver that takes protobuf, and its credentials (OTEL_EXPORTER_OTLP_HEADERS)',
    );
  }
  const why = typeof e.code === 'string' ? e.code : (e.message || 'no answer').split('\n')[0];
  return new UserError(
    `cannot send the trace to ${shown}: ${why}`,
    'is the receiver running and the URL right? e.g. Phoenix: `npm run phoenix` listens on http://127.0.0.1:6006 (scripts/setup-phoenix.sh installs it)',
  );
}
