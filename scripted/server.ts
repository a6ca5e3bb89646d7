/**
 * The scripted model: an OpenAI-compatible chat-completions server that replays a Script.
 * It is the test double for the whole stack and backs `harness model serve --script F`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { contentText, messageText, unmetExpectations, type Script, type ScriptStep } from './script';
import { CORRECTION_HEADER, correctedReply, PROBE_PURPOSE, probeCompletion } from './protocol';

/** Header naming the session whose script and cursor a request uses (default "default"). */
export const SESSION_HEADER = 'x-harness-session';
/** Header giving the 0-based step index explicitly, so a retried call replays the same step. */
export const CALL_INDEX_HEADER = 'x-harness-call-index';
/** Header giving the call's purpose; "compress" gets a summary and never consumes a step. */
export const PURPOSE_HEADER = 'x-harness-purpose';

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
  /** Arrival time, ms since the epoch. */
  at: number;
}

/** A running scripted model server. */
export interface ScriptedModelServer {
  url: string;
  port: number;
  registerScript(session: string, script: Script): void;
  requests: RecordedRequest[];
  onRequest(listener: (r: RecordedRequest) => void): () => void;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

/** An error answered as an OpenAI-style error body. */
class HttpError extends Error {
  constructor(readonly status: number, readonly type: string, message: string, readonly code: unknown = null, readonly usage?: unknown) {
    super(message);
  }
}

/** Starts the server (port 0 = ephemeral, host defaults to 127.0.0.1). */
export async function startScriptedModel(
  opts: { script?: Script; port?: number; host?: string } = {},
): Promise<ScriptedModelServer> {
  const scripts = new Map<string, Script>();
  const cursors = new Map<string, number>();
  const summaryCounts = new Map<string, number>();
  const faultCounts = new Map<string, number>();
  const requests: RecordedRequest[] = [];
  const listeners = new Set<(r: RecordedRequest) => void>();
  let completions = 0;

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
    const record: RecordedRequest = { session, index: null, purpose, body: raw, status: 0, at: Date.now() };
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
        answer = async () => summaryAnswer(session, body);
      } else {
        const index = resolveIndex(req, session);
        record.index = index;
        const correction = Number(header(req, CORRECTION_HEADER) ?? 0);
        answer = correction > 0 ? correctionAnswer(session, index, correction, body) : stepAnswer(session, index, body, abort.signal);
      }
    } catch (err) {
      answer = () => Promise.reject(err);
    }
    // Listeners run on arrival, before any scripted delay, so tests can act mid-call.
    requests.push(record);
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

  /** Synchronously claims the step (fault counting happens on arrival); returns the deferred answer. */
  function stepAnswer(session: string, index: number, body: Json, signal: AbortSignal): () => Promise<Json> {
    const script = scripts.get(session) ?? opts.script;
    if (!script) throw new HttpError(400, 'no_script', `scripted model: no script for session ${session}`);
    const step = script.steps[index];
    if (!step) {
      const n = script.steps.length;
      throw new HttpError(400, 'script_exhausted', `scripted model: script exhausted after ${n} steps (session ${session})`);
    }
    const key = `${session}\u0000${index}`;
    const seen = faultCounts.get(key) ?? 0;
    faultCounts.set(key, seen + 1);
    return async () => {
      const fault = step.fault;
      const times = fault?.times ?? 1;
      // The first `times` requests of a faulty step are delayed and/or failed; later ones answer normally.
      if (fault && seen < times) {
        if (fault.delay_ms) await sleep(fault.delay_ms, undefined, { signal });
        if (fault.status !== undefined) {
          const message =
            fault.message ?? `scripted fault: HTTP ${fault.status} (${seen + 1} of ${times}) at step ${index + 1}`;
          // A fault's usage goes in the error object: what a provider reports a failed request used.
          throw new HttpError(fault.status, 'scripted_fault', message, fault.status, fault.usage);
        }
      }
      const unmet = step.expect ? unmetExpectations(step.expect, body) : [];
      if (unmet.length > 0) {
        const message = `scripted model: step ${index + 1} expectation failed: ${unmet.join('; ')}`;
        throw new HttpError(400, 'script_expectation_failed', message);
      }
      // Only a successful answer moves the cursor, so faulted calls retry the same step.
      cursors.set(session, Math.max(cursors.get(session) ?? 0, index + 1));
      return completion(step, index, body);
    };
  }

  /** A correction of a step's reply: its `corrected` reply, with no faults or expectations (the step had them). */
  function correctionAnswer(session: string, index: number, n: number, body: Json): () => Promise<Json> {
    const step = (scripts.get(session) ?? opts.script)?.steps[index];
    if (!step) throw new HttpError(400, 'script_exhausted', `scripted model: no step ${index + 1} to correct (session ${session})`);
    return async () => completion(correctedReply(step, n), index, body);
  }

  function summaryAnswer(session: string, body: Json): Json {
    const summaries = (scripts.get(session) ?? opts.script)?.summaries ?? [];
    const n = summaryCounts.get(session) ?? 0;
    summaryCounts.set(session, n + 1);
    const messages = body.messages as unknown[];
    const content =
      summaries.length > 0
        ? summaries[Math.min(n, summaries.length - 1)]
        : `Summary of ${messages.length} earlier messages: ` +
          messages.filter((m) => (m as { role?: unknown } | null)?.role === 'user').map((m) => contentText(m).slice(0, 200)).join(' | ');
    return completion({ content }, null, body);
  }

  function resolveIndex(req: IncomingMessage, session: string): number {
    const explicit = header(req, CALL_INDEX_HEADER);
    if (explicit === undefined) return cursors.get(session) ?? 0;
    if (!/^\d+$/.test(explicit)) {
      throw new HttpError(400, 'invalid_request_error', `scripted model: ${CALL_INDEX_HEADER} must be a non-negative integer, got "${explicit}"`);
    }
    return Number(explicit);
  }

  function completion(step: Pick<ScriptStep, 'content' | 'tool_calls'>, index: number | null, body: Json): Json {
    const toolCalls = (step.tool_calls ?? []).map((tc, j) => ({
      id: tc.id ?? `call_${index ?? 'summary'}_${j}`,
      type: 'function',
      function: { name: tc.name, arguments: typeof tc.arguments === 'string' ? tc.arguments : JSON.stringify(tc.arguments) },
    }));
    const message: Json = { role: 'assistant', content: step.content ?? null };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    const outChars = (step.content ?? '').length + toolCalls.reduce((sum, tc) => sum + tc.function.arguments.length, 0);
    const inChars = (body.messages as unknown[]).reduce<number>((sum, m) => sum + messageText(m).length, 0);
    const prompt_tokens = Math.ceil(inChars / 4);
    const completion_tokens = Math.max(1, Math.ceil(outChars / 4));
    return {
      id: `chatcmpl-scripted-${++completions}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === 'string' ? body.model : 'scripted',
      choices: [{ index: 0, message, finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop', logprobs: null }],
      usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens },
    };
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
      // Re-registering an identical script is a no-op; a different one starts the session afresh.
      const current = scripts.get(session);
      if (current && JSON.stringify(current) === JSON.stringify(script)) return;
      scripts.set(session, script);
      cursors.delete(session);
      summaryCounts.delete(session);
      for (const key of faultCounts.keys()) if (key.startsWith(`${session}\u0000`)) faultCounts.delete(key);
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

function parseBody(raw: string): Json {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new HttpError(400, 'invalid_request_error', 'scripted model: request body is not valid JSON');
  }
  const fields = body !== null && typeof body === 'object' ? (body as Json) : {};
  if (!Array.isArray(fields.messages)) {
    throw new HttpError(400, 'invalid_request_error', 'scripted model: request body must be a JSON object with a "messages" array');
  }
  return fields;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function errorBody(message: string, type: string, code: unknown = null, usage?: unknown): Json {
  return { error: { message, type, code, ...(usage ? { usage } : {}) } };
}

/** Pause between streamed chunks, so a watcher sees the text arrive in pieces. */
const STREAM_CHUNK_MS = 10;

/**
 * A completion as a stream (`stream: true`): the text a few words at a time, the tool calls, the
 * finish reason, then the usage (asked for with stream_options.include_usage), then [DONE].
 */
async function sendStream(res: ServerResponse, payload: Json, signal: AbortSignal): Promise<void> {
  if (res.destroyed || res.writableEnded) return;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const choice = (payload.choices as Json[])[0]!;
  const message = choice.message as { content: string | null; tool_calls?: Json[] };
  const base = { id: payload.id, object: 'chat.completion.chunk', created: payload.created, model: payload.model };
  const chunk = (delta: Json, finish: unknown = null) => res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
  chunk({ role: 'assistant', content: '' });
  for (const piece of (message.content ?? '').match(/\S+\s*|\s+/g) ?? []) {
    if (signal.aborted) return;
    chunk({ content: piece });
    await sleep(STREAM_CHUNK_MS).catch(() => undefined);
  }
  (message.tool_calls ?? []).forEach((c, index) => chunk({ tool_calls: [{ index, ...c }] }));
  chunk({}, choice.finish_reason);
  res.write(`data: ${JSON.stringify({ ...base, choices: [], usage: payload.usage })}\n\n`);
  res.end('data: [DONE]\n\n');
}

function send(res: ServerResponse, status: number, payload: unknown): void {
  if (res.destroyed || res.writableEnded) return;
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
