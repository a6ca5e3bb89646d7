/**
 * http_request: one fetch with a hard timeout and a capped, streamed body.
 * Every outcome (including 4xx/5xx, timeouts and network errors) is a ToolResult.
 */
import type { z } from 'zod';
import type { httpRequestTool } from '../../common/builtin-tools';
import { toolError, toolOk } from '../../common/errors';
import type { ToolResult } from '../../common/types';
import { utf8Prefix } from './files';

/** Validated arguments of http_request. */
export type HttpRequestArgs = z.infer<typeof httpRequestTool.parameters>;

/** Injection points: tests pass a fetch; the worker tunes the caps. */
export interface HttpOptions {
  fetch?: typeof fetch;
  maxBytes?: number;
  defaultTimeoutMs?: number;
}

/** Default body cap in bytes. */
export const DEFAULT_HTTP_MAX_BYTES = 100_000;
/** Default timeout when the model gives no timeout_ms; below the tool's 65 s activity timeout. */
export const DEFAULT_HTTP_TIMEOUT_MS = 30_000;

// The few headers worth the model's tokens; the rest is noise.
const KEPT_HEADERS = ['content-type', 'content-length', 'location'];

/** Performs the request described by `args` and returns status, a few headers and the (capped) body. */
export async function httpRequest(args: HttpRequestArgs, opts: HttpOptions = {}): Promise<ToolResult> {
  let url: URL;
  try {
    url = new URL(args.url);
  } catch {
    return toolError('INVALID_ARGUMENTS', `url: ${JSON.stringify(args.url)} is not a valid URL`);
  }
  // z.url() accepts any scheme (file:, data:, ...); only the network is in scope here.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return toolError('INVALID_ARGUMENTS', `url: only http and https URLs are allowed, not "${url.protocol}"`, {
      suggestion: 'use an absolute http:// or https:// URL',
    });
  }
  // Like curl -d: a body without a method means POST.
  const method = args.method ?? (args.body !== undefined ? 'POST' : 'GET');
  if (args.body !== undefined && (method === 'GET' || method === 'HEAD')) {
    return toolError('INVALID_ARGUMENTS', `body: a ${method} request cannot have a body`, { suggestion: 'use POST, PUT or PATCH to send a body' });
  }
  let headers: Headers;
  try {
    headers = new Headers(args.headers ?? {});
  } catch (err) {
    return toolError('INVALID_ARGUMENTS', `headers: ${(err as Error).message}`);
  }

  const timeoutMs = args.timeout_ms ?? opts.defaultTimeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? DEFAULT_HTTP_MAX_BYTES;
  const doFetch = opts.fetch ?? fetch;
  const controller = new AbortController();
  let timedOut = false;
  // One timer covers connect, headers and body, so a slow trickle cannot outlive the timeout.
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  try {
    const response = await doFetch(url.href, { method, headers, body: args.body, signal: controller.signal, redirect: 'follow' });
    const { body, bytes, truncated } = await readCapped(response, maxBytes);
    const result: Record<string, unknown> = {
      status: response.status,
      status_text: response.statusText,
      headers: pickHeaders(response.headers),
      body,
      truncated,
    };
    if (truncated) result.note = `body truncated: only the first ${bytes} bytes are shown`;
    if (response.ok) return toolOk(result);
    // Still hand over the response: an error page or JSON error body tells the model what went wrong.
    return { ...toolError('HTTP_ERROR', `HTTP ${response.status} ${response.statusText}`.trim()), result };
  } catch (err) {
    if (timedOut) {
      return toolError('HTTP_ERROR', `request to ${url.href} timed out after ${timeoutMs} ms`, {
        suggestion: 'retry, or pass a larger timeout_ms (at most 60000)',
      });
    }
    return toolError('HTTP_ERROR', `request to ${url.href} failed: ${causeMessage(err)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads at most maxBytes (+1 to detect overflow) from the body stream, then cancels it. */
async function readCapped(response: Response, maxBytes: number): Promise<{ body: string; bytes: number; truncated: boolean }> {
  if (!response.body) return { body: '', bytes: 0, truncated: false };
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let total = 0;
  while (total <= maxBytes) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
    total += value.byteLength;
  }
  const truncated = total > maxBytes;
  // Stop the download: the rest would be thrown away anyway.
  if (truncated) await reader.cancel().catch(() => undefined);
  const kept = utf8Prefix(Buffer.concat(chunks), maxBytes);
  return { body: kept.toString('utf8'), bytes: kept.length, truncated };
}

function pickHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = headers.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}

/** fetch wraps the real reason ("connect ECONNREFUSED ...") in TypeError("fetch failed").cause. */
function causeMessage(err: unknown): string {
  let current: unknown = err;
  while (current instanceof Error && current.cause !== undefined) current = current.cause;
  // Happy-eyeballs connection attempts fail as an AggregateError with an empty message.
  if (current instanceof AggregateError && !current.message) {
    return current.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))).join('; ');
  }
  if (current instanceof Error) return current.message || (current as NodeJS.ErrnoException).code || current.name;
  return String(current);
}
