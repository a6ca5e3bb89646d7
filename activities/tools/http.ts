/**
 * http_request: one HTTP exchange (plus same-origin redirects) with a hard timeout, a capped,
 * streamed body and an address guard (net-guard.ts). Every outcome (including 4xx/5xx, refused
 * addresses, timeouts and network errors) is a ToolResult; only a cancellation (`signal`) is
 * thrown, so the activity ends as cancelled.
 *
 * Built on node:http rather than fetch because the guard must see the address the socket
 * connects to: fetch resolves names itself and follows redirects to any host.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import { isIP } from 'node:net';
import type { z } from 'zod';
import type { httpRequestTool } from '../../deterministic/builtin-tools';
import { toolError, toolOk } from '../../deterministic/errors';
import type { ToolResult } from '../../deterministic/types';
import { readCapped } from './http-response';
import { AddressDeniedError, checkAddress, guardedLookup, systemResolver, type NetPolicy, type Resolver } from './net-guard';
import { type ServiceAddress } from './net-services';
import { ownPortLookup, type OwnPortLookup } from './own-ports';

/** Validated arguments of http_request. */
export type HttpRequestArgs = z.infer<typeof httpRequestTool.parameters>;

/** Injection points: the worker passes the session's allowance and its own services; tests a resolver. */
export interface HttpOptions {
  maxBytes?: number;
  defaultTimeoutMs?: number;
  /** `host:port` entries whose private or loopback addresses may be reached on that port. */
  allowPrivateHosts?: readonly string[];
  /** The worker's own services: refused even for allowed hosts. */
  workerServices?: readonly ServiceAddress[];
  /** The ports this process (and what it started) listens on: refused even when allowed (default: read from /proc). */
  ownPorts?: OwnPortLookup;
  /** Name resolution (default: the system resolver). */
  resolver?: Resolver;
  /** The activity's cancellation: aborts the request at once, and the call rejects with its reason. */
  signal?: AbortSignal;
}

// The process tree of this process; the worker passes one that also knows its embedded server.
const processOwnPorts = ownPortLookup();

/** Default body cap in bytes. */
const DEFAULT_HTTP_MAX_BYTES = 100_000;
/** Default timeout when the model gives no timeout_ms; below the tool's 65 s activity timeout. */
const DEFAULT_HTTP_TIMEOUT_MS = 30_000;
/** Same-origin redirects followed before giving up. */
export const MAX_HTTP_REDIRECTS = 5;

// The few headers worth the model's tokens; the rest is noise.
const KEPT_HEADERS = ['content-type', 'content-length', 'location'];
// Framing headers the client owns: a model setting them could desynchronise the connection.
const REFUSED_HEADERS = ['transfer-encoding', 'expect', 'upgrade', 'keep-alive'];
// Set by the client from the URL and body (as fetch did), whatever the model passes.
const DROPPED_HEADERS = ['host', 'content-length', 'connection'];
// Describe a body; dropped with it when a redirect turns the request into a GET (as fetch does).
const BODY_HEADERS = ['content-type', 'content-encoding', 'content-language', 'content-location'];
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

interface Outgoing {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** The method a call sends: the model's, or like curl -d, POST when it gives a body and GET otherwise. */
export function requestMethod(args: Pick<HttpRequestArgs, 'method' | 'body'>): string {
  return args.method ?? (args.body !== undefined ? 'POST' : 'GET');
}

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
  if (url.username || url.password) {
    return toolError('INVALID_ARGUMENTS', 'url: credentials in the URL are not supported', { suggestion: 'send them in an Authorization header' });
  }
  const method = requestMethod(args);
  if (args.body !== undefined && (method === 'GET' || method === 'HEAD')) {
    return toolError('INVALID_ARGUMENTS', `body: a ${method} request cannot have a body`, { suggestion: 'use POST, PUT or PATCH to send a body' });
  }
  let headers: Record<string, string>;
  try {
    headers = requestHeaders(args.headers ?? {}, args.body);
  } catch (err) {
    return toolError('INVALID_ARGUMENTS', `headers: ${(err as Error).message}`);
  }

  const policy: NetPolicy = {
    allowPrivateHosts: opts.allowPrivateHosts ?? [],
    services: opts.workerServices ?? [],
    ownPorts: opts.ownPorts ?? processOwnPorts,
    resolver: opts.resolver ?? systemResolver,
  };
  const timeoutMs = args.timeout_ms ?? opts.defaultTimeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? DEFAULT_HTTP_MAX_BYTES;
  const cancelled = opts.signal;
  cancelled?.throwIfAborted();
  const controller = new AbortController();
  // One timer covers every hop's connect, headers and body, so a slow trickle cannot outlive the timeout.
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const cancel = () => controller.abort();
  cancelled?.addEventListener('abort', cancel);
  let request: Outgoing = { url, method, headers, ...(args.body !== undefined ? { body: args.body } : {}) };
  try {
    for (let redirects = 0; ; redirects++) {
      const response = await exchange(request, policy, controller.signal);
      const next = redirectTarget(response, request.url);
      if (!next) return await present(response, maxBytes, request.method);
      if (next.origin !== request.url.origin) {
        // Not followed: the permission policy judges hosts per call, so the model must ask for the new host itself.
        return await present(response, maxBytes, request.method, {
          message: `redirect to ${next.href} not followed: it is on another origin than ${request.url.origin}`,
          suggestion: `call http_request again with url ${next.href} to follow it`,
        });
      }
      if (redirects === MAX_HTTP_REDIRECTS) {
        return await present(response, maxBytes, request.method, {
          message: `stopped after ${MAX_HTTP_REDIRECTS} redirects: ${request.url.href} redirects again to ${next.href}`,
          suggestion: 'the URL redirects in a loop; request the final URL directly if you know it',
        });
      }
      response.destroy();
      request = redirected(request, response.statusCode ?? 0, next);
    }
  } catch (err) {
    // Cancelled: nobody reads a result; the reason (the SDK's CancelledFailure) ends the activity as cancelled.
    if (cancelled?.aborted) throw cancelled.reason ?? err;
    if (err instanceof AddressDeniedError) return denied(request.url, err);
    if (controller.signal.aborted) {
      return toolError('HTTP_ERROR', `request to ${url.href} timed out after ${timeoutMs} ms`, {
        suggestion: 'retry, or pass a larger timeout_ms (at most 60000)',
      });
    }
    return toolError('HTTP_ERROR', `request to ${request.url.href} failed: ${causeMessage(err)}`);
  } finally {
    clearTimeout(timer);
    cancelled?.removeEventListener('abort', cancel);
    controller.abort(); // ends any socket still open (a body cut at the cap, a redirect's body)
  }
}

/** The model's headers as node:http takes them, validated like fetch's Headers, plus fetch's defaults. */
function requestHeaders(given: Record<string, string>, body: string | undefined): Record<string, string> {
  const headers = new Headers(given);
  for (const name of REFUSED_HEADERS) {
    if (headers.has(name)) throw new Error(`${name} is managed by the HTTP client and cannot be set`);
  }
  for (const name of DROPPED_HEADERS) headers.delete(name);
  const out: Record<string, string> = { accept: '*/*', 'user-agent': 'node', 'accept-encoding': 'gzip, deflate, br' };
  if (body !== undefined) out['content-type'] = 'text/plain;charset=UTF-8';
  headers.forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/** Sends one request through the guard and resolves with the response head; the body is left unread. */
async function exchange(req: Outgoing, policy: NetPolicy, signal: AbortSignal): Promise<http.IncomingMessage> {
  const { url } = req;
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // An IP literal never reaches `lookup` (net connects to it directly): check it here instead.
  if (isIP(host)) await checkAddress(policy, url.hostname, host, port);
  const headers: Record<string, string | number> = { ...req.headers };
  if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const outgoing = transport.request(
      {
        host,
        port,
        path: `${url.pathname}${url.search}`,
        method: req.method,
        headers,
        lookup: guardedLookup(policy, url.hostname, port),
        // No shared agent: a kept-alive socket would skip lookup, so a connection checked for one
        // session (whose allowance differs) could serve another.
        agent: false,
        signal,
      },
      resolve,
    );
    outgoing.on('error', reject);
    outgoing.end(req.body);
  });
}

/** The absolute URL a redirect response points to, or undefined when it is not a followable redirect. */
function redirectTarget(response: http.IncomingMessage, base: URL): URL | undefined {
  const location = response.headers.location;
  if (!REDIRECT_STATUSES.has(response.statusCode ?? 0) || !location) return undefined;
  try {
    return new URL(location, base);
  } catch {
    return undefined; // an unparseable Location: hand the response over as it is
  }
}

/** The request to send after a redirect, with fetch's method rules (303 and POST on 301/302 become GET). */
function redirected(req: Outgoing, status: number, next: URL): Outgoing {
  const toGet = (status === 303 && req.method !== 'HEAD') || ((status === 301 || status === 302) && req.method === 'POST');
  if (!toGet) return { ...req, url: next };
  const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !BODY_HEADERS.includes(name)));
  return { url: next, method: 'GET', headers };
}

/** Reads the (capped) body and builds the tool result; `failure` turns it into an HTTP_ERROR with that message. */
async function present(
  response: http.IncomingMessage,
  maxBytes: number,
  method: string,
  failure?: { message: string; suggestion: string },
): Promise<ToolResult> {
  const status = response.statusCode ?? 0;
  const statusText = response.statusMessage ?? '';
  const { body, bytes, truncated } = await readCapped(response, maxBytes, method);
  const result: Record<string, unknown> = { status, status_text: statusText, headers: pickHeaders(response.headers), body, truncated };
  if (truncated) result.note = `body truncated: only the first ${bytes} bytes are shown`;
  if (failure) return { ...toolError('HTTP_ERROR', `HTTP ${status} ${statusText}: ${failure.message}`, { suggestion: failure.suggestion }), result };
  if (status >= 200 && status < 300) return toolOk(result);
  // Still hand over the response: an error page or JSON error body tells the model what went wrong.
  return { ...toolError('HTTP_ERROR', `HTTP ${status} ${statusText}`.trim()), result };
}

function pickHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = headers[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** PERMISSION_DENIED for a refused address, saying how a user allows it when that is possible. */
function denied(url: URL, err: AddressDeniedError): ToolResult {
  const message = `http_request to ${url.host} refused: ${err.message}`;
  if (!err.allowable) return toolError('PERMISSION_DENIED', message, { suggestion: 'this address is never reachable from http_request; do without it' });
  // An allowance names one port: the URL's, written out even where the URL leaves it implicit.
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  return toolError('PERMISSION_DENIED', message, {
    suggestion: `private, loopback and link-local addresses are blocked; if the user trusts this service they can add "${url.hostname}:${port}" (host and port) to network.allowPrivateHosts in harness.config.json`,
  });
}

/** Node wraps the real reason in causes, and happy-eyeballs failures in an AggregateError with no message. */
function causeMessage(err: unknown): string {
  let current: unknown = err;
  while (current instanceof Error && current.cause !== undefined) current = current.cause;
  if (current instanceof AggregateError && !current.message) {
    return current.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))).join('; ');
  }
  if (current instanceof Error) return current.message || (current as NodeJS.ErrnoException).code || current.name;
  return String(current);
}
