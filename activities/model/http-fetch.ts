/**
 * fetch for model requests over node:http and node:https. The global fetch (undici) runs the
 * whole WHATWG fetch algorithm for each request: request and response objects, header lists,
 * several streams, a body extracted and re-wrapped. With 16 eval trials at once that garbage
 * was a large part of what a trial cost the worker above a bare workflow, and it made that
 * cost swing from round to round with the major collections it brought on (bench:eval). Here a
 * request is one http request on a kept-alive socket, and the reply one ReadableStream over the
 * socket's data, read incrementally, so the harness's bounded readers (body.ts) stay where
 * the limits are.
 *
 * What it does not do, as a model endpoint needs none of it: redirects are returned, not
 * followed (an endpoint that redirects fails with its 3xx status; following one would send the
 * request, and its API key, to an address nobody declared); no content decoding is asked for; a
 * body other than a string or bytes, or a URL that is not http(s), goes to the global fetch.
 */
import http from 'node:http';
import https from 'node:https';

/**
 * Sockets kept for the next request: a model endpoint is asked again within seconds. Freed after
 * 4 s idle, below the 5 s after which common servers (Node's, uvicorn's) close an idle
 * connection, so a request rarely lands on a socket the server is closing.
 */
const IDLE_MS = 4_000;

/** The sockets of each scheme a fetch keeps. */
export interface Agents {
  'http:': http.Agent;
  'https:': https.Agent;
}

const KEPT: Agents = {
  'http:': new http.Agent({ keepAlive: true, timeout: IDLE_MS, scheduling: 'lifo' }),
  'https:': new https.Agent({ keepAlive: true, timeout: IDLE_MS, scheduling: 'lifo' }),
};

/**
 * A fetch over node:http(s) for what the openai client sends; anything else goes to `fallback`.
 * `agents` (tests: one that trusts their own certificate) default to the process's kept sockets.
 */
export function httpFetch(fallback: typeof fetch = fetch, agents: Agents = KEPT): typeof fetch {
  return (input, init = {}) => {
    const url = typeof input === 'string' ? new URL(input) : input instanceof URL ? input : undefined;
    const body = init.body;
    const plainBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array;
    if (!url || !(url.protocol === 'http:' || url.protocol === 'https:') || !plainBody) return fallback(input, init);
    return request(url, init, body ?? undefined, agents);
  };
}

function request(url: URL, init: RequestInit, body: string | Uint8Array | undefined, agents: Agents): Promise<Response> {
  const signal = init.signal ?? undefined;
  if (signal?.aborted) return Promise.reject(abortError(signal));
  const headers: Record<string, string> = {};
  new Headers(init.headers).forEach((value, name) => (headers[name] = value));
  if (body !== undefined) headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
  const protocol = url.protocol as keyof Agents;
  const send = protocol === 'https:' ? https.request : http.request;
  return new Promise<Response>((resolve, reject) => {
    const req = send(url, { method: init.method ?? 'GET', headers, agent: agents[protocol] }, (res) => {
      try {
        resolve(response(res, signal));
      } catch (err) {
        res.destroy();
        reject(new TypeError('fetch failed', { cause: err }));
      }
    });
    const onAbort = () => req.destroy(abortError(signal!));
    signal?.addEventListener('abort', onAbort, { once: true });
    req.once('close', () => signal?.removeEventListener('abort', onAbort));
    req.on('error', (err) => reject(signal?.aborted ? abortError(signal) : new TypeError('fetch failed', { cause: err })));
    req.end(body);
  });
}

/** The reply as a Response whose body streams the socket's data, paused while nobody reads. */
function response(res: http.IncomingMessage, signal: AbortSignal | undefined): Response {
  const status = res.statusCode ?? 0;
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  const init = { status, statusText: res.statusMessage ?? '', headers };
  // A status that carries no body gets a Response without one (the constructor refuses one).
  if (NO_BODY.has(status)) {
    res.resume();
    return new Response(null, init);
  }
  const onAbort = () => res.destroy(abortError(signal!));
  const detach = () => signal?.removeEventListener('abort', onAbort);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      signal?.addEventListener('abort', onAbort, { once: true });
      res.on('data', (chunk: Buffer) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) res.pause();
      });
      res.once('end', () => {
        detach();
        controller.close();
      });
      res.once('error', (err) => {
        detach();
        controller.error(signal?.aborted ? abortError(signal) : new TypeError('terminated', { cause: err }));
      });
    },
    pull() {
      res.resume();
    },
    cancel() {
      detach();
      res.destroy();
    },
  });
  return new Response(body, init);
}

const NO_BODY = new Set([204, 205, 304]);

/** What an aborted fetch rejects with: the signal's reason when it is an Error, else an AbortError. */
function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');
}
