/**
 * `harness console`: a small HTTP server on node:http (no framework: a dozen routes, and the
 * less code between a request and an approval the better) serving the page's static assets
 * (console/assets, shipped in the package, no build step, nothing fetched from elsewhere: it
 * works offline) and the JSON API (api.ts), with a Server-Sent Events stream per session that
 * carries each span change as history records it (client/watch/live.ts), and one per running turn
 * of its typed events with the model's text as it streams (HarnessClient.events). Every request passes
 * security.ts first.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../machine/paths';
import { UserError } from '../machine/errors';
import { watchSession, watchTurn } from '../client/watch/live';
import { allowedHosts, postProblem, requestToken, securityHeaders, tokenMatches } from './security';
import * as api from './api';
import type { Span } from '../history/trace/types';
import { isAnyTurnId, sessionOfTurnId } from '../deterministic/turn-id';
import { serveSse } from './sse';
import { consoleSchedules } from './schedules';
import { consoleSend } from './send';

/** A running console. */
export interface ConsoleServer {
  /** The address with the token in its fragment, to open once (the page keeps it and drops it from the address bar). */
  url: string;
  /** The address without the token. */
  base: string;
  close(): Promise<void>;
}

const ASSETS: Record<string, string> = {
  '/': 'index.html',
  '/assets/app.js': 'app.js',
  '/assets/access.js': 'access.js',
  '/assets/page.js': 'page.js',
  '/assets/sessions.js': 'sessions.js',
  '/assets/streaming.js': 'streaming.js',
  '/assets/schedules.js': 'schedules.js',
  '/assets/app.css': 'app.css',
};
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };
/** Largest JSON body a decision may have. */
const MAX_BODY = 64 * 1024;

/** Starts the console on host:port (port 0: a free one); `token` guards every request. */
export async function startConsole(deps: api.ApiDeps, opts: { host: string; port: number; token: string }): Promise<ConsoleServer> {
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => fail(res, err));
  });
  let hosts = new Set<string>();
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    securityHeaders(res);
    if (!hosts.has(req.headers.host ?? '')) return json(res, 421, { error: 'this console answers only to its own address' });
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    // The page holds nothing of a session: it is what reads the token from the link's fragment.
    if (req.method === 'GET' && ASSETS[url.pathname]) return asset(res, ASSETS[url.pathname]!);
    if (!tokenMatches(requestToken(req), opts.token)) return json(res, 401, { error: 'the console needs its access token: open the link `harness console` printed' });
    if (req.method === 'POST') {
      const problem = postProblem(req, hosts);
      if (problem) return json(res, 403, { error: problem });
      return post(res, url.pathname, await body(req));
    }
    if (req.method !== 'GET') return json(res, 405, { error: 'GET or POST only' });
    return get(req, res, url);
  };
  const get = async (req: IncomingMessage, res: ServerResponse, url: URL) => {
    if (url.pathname === '/api/config') return json(res, 200, { temporal_ui: deps.temporalUi ?? null, namespace: deps.namespace, task_queue: deps.taskQueue, queues: api.displayed(api.consoleQueues(deps)) });
    if (url.pathname === '/api/sessions') return json(res, 200, await api.sessions(deps));
    if (url.pathname === '/api/inbox') return json(res, 200, await api.inbox(deps));
    if (url.pathname === '/api/schedules') return json(res, 200, await consoleSchedules(deps));
    const id = url.searchParams.get('id') ?? '';
    if (url.pathname === '/api/trace') return json(res, 200, await api.trace(deps, id, url.searchParams.get('full') === '1'));
    if (url.pathname === '/api/cost') return json(res, 200, await api.cost(deps, id));
    if (url.pathname === '/api/call') return json(res, 200, await api.call(deps, url.searchParams.get('session') ?? '', url.searchParams.get('call') ?? ''));
    if (url.pathname === '/api/events') return events(req, res, id);
    if (url.pathname === '/api/turn-events') return turnEvents(req, res, id);
    return json(res, 404, { error: 'no such page' });
  };
  const post = async (res: ServerResponse, pathname: string, b: api.DecisionBody) => {
    const m = /^\/api\/sessions\/([^/]+)\/(decide|answer|send)$/.exec(pathname);
    if (!m) return json(res, 404, { error: 'no such action' });
    const sessionId = decodeURIComponent(m[1]!);
    if (m[2] === 'send') return json(res, 200, await consoleSend(deps, sessionId, b));
    return json(res, 200, m[2] === 'decide' ? await api.decide(deps, sessionId, b) : await api.answer(deps, sessionId, b));
  };
  /** Each span change of a session (or turn) as an SSE event, from its first span on. */
  const events = async (req: IncomingMessage, res: ServerResponse, id: string) => {
    if (!id) return json(res, 400, { error: 'id is required' });
    await serveSse(req, res, async (send, signal) => {
      const o = { signal, onChange: (c: { change: string; span: Span }) => send({ change: c.change, span: api.displaySpan(c.span), at: Date.now() }) };
      return (isAnyTurnId(id) ? await watchTurn(deps.harness.temporal, id, o) : await watchSession(deps.harness.temporal, id, o)) ? 'closed' : 'unknown';
    });
  };
  /**
   * A turn's typed events (HarnessClient.events: what an app reads), its streamed model text
   * among them, as SSE events with every text escaped as the rest of the page's values are; ends
   * after the turn's `final`.
   */
  const turnEvents = async (req: IncomingMessage, res: ServerResponse, turnId: string) => {
    if (!isAnyTurnId(turnId)) return json(res, 400, { error: "id must be a turn id: <session>/turn-N, or a sub-agent's <session>/turn-N/agent-<call id>" });
    await serveSse(req, res, async (send, signal) => {
      try {
        for await (const ev of deps.harness.events(sessionOfTurnId(turnId), { turnId, signal })) send(api.displayed(ev));
      } catch (err) {
        if (err instanceof UserError) return 'unknown';
        throw err;
      }
      return 'closed';
    });
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  hosts = allowedHosts(opts.host, port);
  const shown = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  const base = `http://${shown}:${port}`;
  return {
    url: `${base}/#token=${opts.token}`,
    base,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function asset(res: ServerResponse, name: string): void {
  res.writeHead(200, { 'Content-Type': TYPES[path.extname(name)] ?? 'application/octet-stream' });
  res.end(readFileSync(path.join(projectRoot(), 'console', 'assets', name)));
}

function json(res: ServerResponse, status: number, value: unknown): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(value));
}

/** A mistake a person can fix is 400 with its hint; anything else 500 with its first line (never a stack). */
function fail(res: ServerResponse, err: unknown): void {
  if (err instanceof UserError) return json(res, 400, { error: err.message, ...(err.hint ? { hint: err.hint } : {}) });
  json(res, 500, { error: ((err as Error)?.message ?? String(err)).split('\n')[0] });
}

async function body(req: IncomingMessage): Promise<api.DecisionBody> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new UserError('the request is too large', 'send less');
    chunks.push(chunk as Buffer);
  }
  try {
    const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
    return v as api.DecisionBody;
  } catch {
    throw new UserError('the request is not a JSON object', 'send JSON');
  }
}
