/**
 * The scripted model: an OpenAI-compatible chat-completions server that replays a Script.
 * It is the test double for the whole stack and backs `harness model serve --script F`.
 * This file is the server: its routes, which step a request asks for, the record of requests,
 * and its life (listen, close). What a step answers is player.ts; the HTTP plumbing is http.ts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Script } from './script';
import { CORRECTION_HEADER, PROBE_PURPOSE, probeCompletion } from './protocol';
import { errorBody, header, HttpError, parseBody, readBody, send, sendStream, type Json } from './http';
import { ScriptPlayer } from './player';

/** Header naming the session whose script and cursor a request uses (default "default"). */
const SESSION_HEADER = 'x-harness-session';
/** Header giving the 0-based step index explicitly, so a retried call replays the same step. */
const CALL_INDEX_HEADER = 'x-harness-call-index';
/** Header giving the call's purpose; "compress" gets a summary and never consumes a step. */
const PURPOSE_HEADER = 'x-harness-purpose';

/** One chat request as the server saw it. */
export interface RecordedRequest {
  session: string;
  /** 0-based step index the request was matched to; null for compress calls and rejected requests. */
  index: number | null;
  /** Value of the purpose header, "chat" when absent. */
  purpose: string;
  /** Parsed JSON body (the raw text when it was not JSON). */
  body: unknown;
  /** HTTP status sent: 0 while pending (e.g. during a delay), 499 when the client went away first. */
  status: number;
  /** Arrival time, ms since the epoch, to a fraction of a millisecond (benchmarks time steps by it). */
  at: number;
}

/** A running scripted model server. */
export interface ScriptedModelServer {
  url: string;
  port: number;
  registerScript(session: string, script: Script): void;
  /** Every request so far, unless the server was started with `record: false` (then always empty). */
  requests: RecordedRequest[];
  onRequest(listener: (r: RecordedRequest) => void): () => void;
  close(): Promise<void>;
}

/**
 * Starts the server (port 0 = ephemeral, host defaults to 127.0.0.1). `record: false` keeps no
 * record of requests (listeners still see each): a server that lives as long as a worker or a
 * `harness model serve` would otherwise hold every request body it was ever sent.
 */
export async function startScriptedModel(
  opts: { script?: Script; port?: number; host?: string; record?: boolean } = {},
): Promise<ScriptedModelServer> {
  const player = new ScriptPlayer(opts.script);
  const requests: RecordedRequest[] = [];
  const listeners = new Set<(r: RecordedRequest) => void>();

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) send(res, 500, errorBody(`scripted model: ${String(err)}`, 'server_error'));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/health') return send(res, 200, { ok: true });
    if (req.method === 'GET' && path === '/v1/models') {
      return send(res, 200, { object: 'list', data: [{ id: 'scripted', object: 'model', created: 0, owned_by: 'harness' }] });
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') return chat(req, res);
    send(res, 404, errorBody(`scripted model: no route for ${req.method} ${path}`, 'not_found'));
  }

  async function chat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const session = header(req, SESSION_HEADER) ?? 'default';
    const purpose = header(req, PURPOSE_HEADER) ?? 'chat';
    // auto's probe is answered like a model with native tool calls; it is no step of the script.
    if (purpose === PROBE_PURPOSE) {
      try {
        send(res, 200, probeCompletion(parseBody(raw)));
      } catch (err) {
        if (!(err instanceof HttpError)) throw err;
        send(res, err.status, errorBody(err.message, err.type, err.code));
      }
      return;
    }
    const record: RecordedRequest = { session, index: null, purpose, body: raw, status: 0, at: performance.timeOrigin + performance.now() };
    // A client that disconnects (e.g. its timeout fired) cancels any pending delay.
    const abort = new AbortController();
    res.on('close', () => {
      if (res.writableFinished) return;
      abort.abort();
      if (record.status === 0) record.status = 499;
    });
    let answer: () => Promise<Json>;
    try {
      const body = parseBody(raw);
      record.body = body;
      if (purpose === 'compress') {
        answer = async () => player.summaryAnswer(session, body);
      } else {
        const index = resolveIndex(req, session);
        record.index = index;
        const correction = Number(header(req, CORRECTION_HEADER) ?? 0);
        answer = correction > 0 ? player.correctionAnswer(session, index, correction, body) : player.stepAnswer(session, index, body, abort.signal);
      }
    } catch (err) {
      answer = () => Promise.reject(err);
    }
    // Listeners run on arrival, before any scripted delay, so tests can act mid-call.
    if (opts.record !== false) requests.push(record);
    for (const listener of listeners) listener(record);
    try {
      const payload = await answer();
      record.status = 200;
      if ((record.body as Json | undefined)?.stream === true) await sendStream(res, payload, abort.signal);
      else send(res, 200, payload);
    } catch (err) {
      if (abort.signal.aborted) return;
      if (!(err instanceof HttpError)) throw err;
      record.status = err.status;
      send(res, err.status, errorBody(err.message, err.type, err.code, err.usage));
    }
  }

  /** The step a request asks for: the call-index header (a retry replays its step), else the session's cursor. */
  function resolveIndex(req: IncomingMessage, session: string): number {
    const explicit = header(req, CALL_INDEX_HEADER);
    if (explicit === undefined) return player.cursor(session);
    if (!/^\d+$/.test(explicit)) {
      throw new HttpError(400, 'invalid_request_error', `scripted model: ${CALL_INDEX_HEADER} must be a non-negative integer, got "${explicit}"`);
    }
    return Number(explicit);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host === undefined || opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`,
    port,
    requests,
    registerScript(session, script) {
      player.register(session, script);
    },
    onRequest(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err && (err as NodeJS.ErrnoException).code !== 'ERR_SERVER_NOT_RUNNING' ? reject(err) : resolve()));
        // Keep-alive sockets and requests parked in a delay would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}
