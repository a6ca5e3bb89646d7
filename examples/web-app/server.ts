/**
 * A web app on the harness: a small HTTP server (node:http, no framework) and one page.
 *
 *   POST /sessions {text, agent?}                     starts a session: {sessionId, turnId}
 *   GET  /sessions/:id/events?turn=&from=             the turn's events as Server-Sent Events
 *   GET  /approvals                                   the calls waiting for approval
 *   POST /approvals/:sessionId/:callId {decision, reason?}   approve or deny one
 *   POST /webhook                                     a signed notification from the harness
 *   GET  /                                            the page (index.html)
 *
 * Every event's SSE `id` is its position in the turn (`<offset>.<seq>`), so a browser that lost
 * the stream reconnects with Last-Event-ID and gets exactly what came after. Errors are JSON,
 * `{"error": "<one line>"}`. Runs the worker (worker.ts) in this process unless
 * WEB_APP_WORKER=external.
 *
 *   node dist/examples/web-app/server.js     (PORT, default 3000; HOST, default 127.0.0.1)
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { connectHarness, UsageError, UserError, type EventPosition, type HarnessClient, type HarnessEvent, type HarnessWorker } from 'durable-agent-harness';
import { notesAgent, startWorker, TASK_QUEUE } from './worker';

/** The page: beside the sources (examples/web-app/), the build being in dist/examples/web-app/. */
const PAGE = path.resolve(__dirname, '..', '..', '..', 'examples', 'web-app', 'index.html');
/** Bodies larger than this are refused (a message, a decision, a notification). */
const MAX_BODY = 256 * 1024;
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

/** A failure the client caused or can act on: its status and one line. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
  res.end(text);
}

/** The status and one-line message of any error: the harness's own refusals keep their words. */
function describeError(err: unknown): { status: number; error: string } {
  const line = (m: string) => m.split('\n')[0]!.slice(0, 500);
  if (err instanceof HttpError) return { status: err.status, error: line(err.message) };
  if (err instanceof UserError || err instanceof UsageError) {
    // UsageError is a UserError: test it for the message first.
    const missing = /^no session |has no turn |is not pending|has no pending approval/.test(err.message);
    return { status: missing ? 404 : err instanceof UsageError ? 400 : 409, error: line(err.message) };
  }
  console.error(err);
  return { status: 500, error: 'internal error (see the server log)' };
}

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HttpError(413, `the body is over ${MAX_BODY} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/**
 * A JSON object body. Requiring the JSON content type keeps other sites' plain form posts out: a
 * browser sends this type cross-origin only after a preflight, which this server never grants.
 */
async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) throw new HttpError(415, 'send the body as application/json');
  let body: unknown;
  try {
    body = JSON.parse((await readBody(req)).toString('utf8'));
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new HttpError(400, 'the body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new HttpError(400, 'the body must be a JSON object');
  return body as Record<string, unknown>;
}

/** `<offset>.<seq>` (an event's SSE id), or `<offset>` (after every event of that history event). */
function parsePosition(text: string): EventPosition | number {
  const m = /^(\d{1,12})(?:\.(\d{1,6}))?$/.exec(text.trim());
  if (!m) throw new HttpError(400, `from must be an event id (<offset>.<seq>), not ${JSON.stringify(text.slice(0, 40))}`);
  return m[2] === undefined ? Number(m[1]) : { offset: Number(m[1]), seq: Number(m[2]) };
}

export function createServer(harness: HarnessClient, opts: { webhookSecret?: string } = {}): http.Server {
  const streams = new Set<http.ServerResponse>();

  async function startSession(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readJson(req);
    if (typeof body.text !== 'string' || body.text.trim() === '') throw new HttpError(400, 'text is required: the message, a non-empty string');
    if (body.agent !== undefined && (typeof body.agent !== 'string' || body.agent === '')) throw new HttpError(400, 'agent must be an agent name');
    const sent = await harness.send(body.text, { agent: (body.agent as string | undefined) ?? notesAgent.name });
    sendJson(res, 201, { sessionId: sent.sessionId, turnId: sent.turnId });
  }

  async function streamEvents(req: http.IncomingMessage, res: http.ServerResponse, sessionId: string, url: URL): Promise<void> {
    const turnParam = url.searchParams.get('turn') ?? undefined;
    const turnId = turnParam && /^\d+$/.test(turnParam) ? Number(turnParam) : turnParam;
    // A browser reconnecting sends the last id it saw; a first request may name one in ?from=.
    const fromText = (req.headers['last-event-id'] as string | undefined) || url.searchParams.get('from') || undefined;
    const from = fromText === undefined ? undefined : parsePosition(fromText);
    if (from !== undefined && turnId === undefined) throw new HttpError(400, 'from needs turn: the turnId POST /sessions returned');

    const stop = new AbortController();
    res.on('close', () => stop.abort());
    const events = harness.events(sessionId, { ...(turnId !== undefined ? { turnId } : {}), ...(from !== undefined ? { from } : {}), signal: stop.signal })[Symbol.asyncIterator]();
    // The first event (or the refusal of an unknown session or turn) before any header: a
    // refusal is then a plain JSON error, not a stream.
    let next = await events.next();
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.write('retry: 2000\n\n');
    streams.add(res);
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
    try {
      while (!next.done) {
        const e: HarnessEvent = next.value;
        // JSON.stringify escapes newlines: the data is one line.
        res.write(`id: ${e.offset}.${e.seq}\ndata: ${JSON.stringify(e)}\n\n`);
        if (e.type === 'final') break;
        next = await events.next();
      }
    } catch (err) {
      if (!stop.signal.aborted) res.write(`event: failure\ndata: ${JSON.stringify({ error: describeError(err).error })}\n\n`);
    } finally {
      clearInterval(keepalive);
      streams.delete(res);
      stop.abort();
      res.end();
    }
  }

  async function listApprovals(res: http.ServerResponse): Promise<void> {
    const items = await harness.pending({ taskQueue: TASK_QUEUE });
    sendJson(res, 200, { approvals: items.filter((i) => i.kind === 'approval') });
  }

  async function decide(req: http.IncomingMessage, res: http.ServerResponse, sessionId: string, callId: string): Promise<void> {
    const body = await readJson(req);
    if (body.decision !== 'approve' && body.decision !== 'deny') throw new HttpError(400, 'decision must be "approve" or "deny"');
    if (body.reason !== undefined && typeof body.reason !== 'string') throw new HttpError(400, 'reason must be a string');
    const approve = body.decision === 'approve';
    const reason = (body.reason as string | undefined) || (approve ? undefined : 'denied in the web app');
    // With the digest the person was shown: a call that changed since is refused. A call the
    // list does not show yet (it lags the turn by a moment) is looked up by id by the turn itself.
    const item = (await harness.pending({ taskQueue: TASK_QUEUE })).find((i) => i.kind === 'approval' && i.sessionId === sessionId && i.callId === callId);
    const digest = item?.kind === 'approval' ? item.digest : undefined;
    const decided = await harness.decide(sessionId, {
      approve,
      ...(digest ? { calls: [{ callId, digest }] } : { callIds: [callId] }),
      ...(reason ? { reason } : {}),
    });
    sendJson(res, 200, { turnId: decided.turnId, decided: decided.calls.map((c) => ({ callId: c.callId, tool: c.tool })), approved: approve });
  }

  async function webhook(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    if (!opts.webhookSecret) throw new HttpError(404, 'webhooks are off: start the server with WEBHOOK_SECRET');
    const raw = await readBody(req);
    // `x-harness-signature: sha256=<hex>`: HMAC-SHA256 of the raw body with the shared secret.
    const given = String(req.headers['x-harness-signature'] ?? '').replace(/^sha256=/, '');
    const expected = createHmac('sha256', opts.webhookSecret).update(raw).digest();
    const got = /^[0-9a-f]{64}$/i.test(given) ? Buffer.from(given, 'hex') : Buffer.alloc(0);
    if (got.length !== expected.length || !timingSafeEqual(got, expected)) throw new HttpError(401, 'bad signature');
    let note: { type?: unknown; sessionId?: unknown };
    try {
      note = JSON.parse(raw.toString('utf8')) as typeof note;
    } catch {
      throw new HttpError(400, 'the body is not JSON');
    }
    // A real app would update its records or tell someone here; this one logs a line.
    console.log(`webhook: ${JSON.stringify(note.type ?? null)} ${JSON.stringify(note.sessionId ?? null)}`);
    sendJson(res, 200, { ok: true });
  }

  function page(res: http.ServerResponse): void {
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      // The page's own inline script and style; nothing from elsewhere.
      'content-security-policy': "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'",
    });
    res.end(readFileSync(PAGE));
  }

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://app');
    const parts = url.pathname.split('/').filter(Boolean).map((p) => decodeURIComponent(p));
    const method = req.method ?? 'GET';
    const is = (m: string, ...shape: Array<string | null>) => method === m && parts.length === shape.length && shape.every((s, i) => s === null || s === parts[i]);
    if (is('GET')) return page(res);
    if (is('POST', 'sessions')) return startSession(req, res);
    if (is('GET', 'sessions', null, 'events')) return streamEvents(req, res, parts[1]!, url);
    if (is('GET', 'approvals')) return listApprovals(res);
    if (is('POST', 'approvals', null, null)) return decide(req, res, parts[1]!, parts[2]!);
    if (is('POST', 'webhook')) return webhook(req, res);
    throw new HttpError(404, `no route ${method} ${url.pathname}`);
  }

  const server = http.createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      const { status, error } = describeError(err);
      if (res.headersSent) res.end();
      else sendJson(res, status, { error });
    });
  });
  // Open event streams end with the server.
  server.on('close', () => {
    for (const s of streams) s.end();
  });
  return server;
}

async function main(): Promise<void> {
  const worker: HarnessWorker | undefined = process.env.WEB_APP_WORKER === 'external' ? undefined : await startWorker();
  const running = worker?.run();
  const harness = await connectHarness({ taskQueue: TASK_QUEUE });
  const server = createServer(harness, { webhookSecret: process.env.WEBHOOK_SECRET || undefined });
  const host = process.env.HOST || '127.0.0.1';
  await new Promise<void>((resolve) => server.listen(Number(process.env.PORT ?? 3000), host, resolve));
  const { port } = server.address() as { port: number };
  console.log(`listening on http://${host}:${port}`);

  const stop = async () => {
    server.close();
    server.closeAllConnections();
    worker?.shutdown();
    await running;
    await harness.close();
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      stop().then(
        () => process.exit(0),
        (err: Error) => {
          console.error(`error: ${err.message}`);
          process.exit(1);
        },
      );
    });
  }
  await running; // the worker stops on its own too (Temporal's runtime hears the same signals)
}

if (require.main === module) {
  main().catch((err: Error & { hint?: string }) => {
    console.error(`error: ${err.message}${err.hint ? `\nhint: ${err.hint}` : ''}`);
    process.exit(1);
  });
}
