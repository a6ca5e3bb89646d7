/**
 * An OpenAI-compatible endpoint that rate-limits, fails and refuses as real providers do: each
 * session's requests get the answers the test queued, in order (an HTTP error with its headers
 * and the provider's error object, or a reply, streamed when asked to stream). It can refuse to
 * stream as a model without streaming does (a 400 naming `stream`), or ignore `stream` and answer
 * with a whole JSON reply. Every request is recorded with when it arrived and whether it asked to
 * stream. auto's probes are answered as a model with native tool calls would, and kept apart.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/**
 * One answer: an HTTP error (status, headers such as Retry-After, the error's message; with
 * `forMs`, every request gets it until that long after the first did: an outage), or a reply's
 * text or tool call.
 */
export type LimitedAnswer =
  | { status: number; headers?: Record<string, string>; message?: string; param?: string; forMs?: number }
  | { content: string }
  | { tool: string; arguments?: Record<string, unknown> };

/** A request as the endpoint got it. */
export interface LimitedRequest {
  /** Date.now() when it arrived. */
  at: number;
  stream: boolean;
  /** The status it was answered with. */
  status: number;
}

/** How the endpoint treats `stream: true`: streams (default), refuses it with a 400 naming `stream`, or ignores it. */
export type StreamSupport = 'streams' | 'refuses' | 'ignores';

export interface LimitedEndpoint {
  url: string;
  /** Queues a session's answers (the session comes in x-harness-session). */
  script(sessionId: string, answers: LimitedAnswer[]): void;
  /** How the endpoint treats a session's stream requests. */
  streaming(sessionId: string, support: StreamSupport): void;
  /** A session's requests, probes apart. */
  requests(sessionId: string): LimitedRequest[];
  close(): Promise<void>;
}

const USAGE = { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 };

/** Starts the endpoint on a free port of 127.0.0.1. */
export async function startLimitedEndpoint(): Promise<LimitedEndpoint> {
  const queues = new Map<string, LimitedAnswer[]>();
  const support = new Map<string, StreamSupport>();
  const seen = new Map<string, LimitedRequest[]>();
  const outageStart = new Map<LimitedAnswer, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const at = Date.now();
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { stream?: boolean; tools?: Array<{ function: { name: string } }> };
      const session = String(req.headers['x-harness-session'] ?? '');
      if (req.headers['x-harness-purpose'] === 'probe') {
        const tool = body.tools?.[0]?.function.name;
        return json(res, 200, completion(tool ? { tool } : { content: 'It is noon.' }));
      }
      const stream = body.stream === true;
      const record = (status: number) => seen.set(session, [...(seen.get(session) ?? []), { at, stream, status }]);
      const mode = support.get(session) ?? 'streams';
      if (stream && mode === 'refuses') {
        record(400);
        return json(res, 400, { error: { message: "Unsupported value: 'stream' does not support true with this model.", type: 'invalid_request_error', param: 'stream', code: 'unsupported_value' } });
      }
      const queue = queues.get(session) ?? [];
      let next = queue.shift();
      if (next && 'status' in next && next.forMs !== undefined) {
        const since = outageStart.get(next) ?? at;
        outageStart.set(next, since);
        if (at - since < next.forMs) queue.unshift(next);
        else next = queue.shift();
      }
      if (!next) {
        record(500);
        return json(res, 500, { error: { message: `no answer left for ${session}` } });
      }
      if ('status' in next) {
        record(next.status);
        return json(res, next.status, { error: { message: next.message ?? `HTTP ${next.status}`, type: 'error', ...(next.param ? { param: next.param } : {}) } }, next.headers);
      }
      record(200);
      if (stream && mode === 'streams') return sse(res, next);
      json(res, 200, completion(next));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    script: (sessionId, answers) => queues.set(sessionId, [...answers]),
    streaming: (sessionId, s) => support.set(sessionId, s),
    requests: (sessionId) => seen.get(sessionId) ?? [],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
}

function message(a: { content: string } | { tool: string; arguments?: Record<string, unknown> }): Record<string, unknown> {
  if ('content' in a) return { role: 'assistant', content: a.content };
  return { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: a.tool, arguments: JSON.stringify(a.arguments ?? {}) } }] };
}

function completion(a: { content: string } | { tool: string; arguments?: Record<string, unknown> }): Record<string, unknown> {
  const finish = 'content' in a ? 'stop' : 'tool_calls';
  return { id: 'x', object: 'chat.completion', created: 0, model: 'limited', choices: [{ index: 0, finish_reason: finish, message: message(a) }], usage: USAGE };
}

/** The reply as a server-sent stream: its text in two chunks (or its call in one), the finish, usage, [DONE]. */
function sse(res: ServerResponse, a: { content: string } | { tool: string; arguments?: Record<string, unknown> }): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const event = (choices: unknown[], rest: Record<string, unknown> = {}) => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'limited', choices, ...rest })}\n\n`;
  if ('content' in a) {
    const half = Math.ceil(a.content.length / 2);
    res.write(event([{ index: 0, delta: { role: 'assistant', content: a.content.slice(0, half) } }]));
    res.write(event([{ index: 0, delta: { content: a.content.slice(half) } }]));
  } else {
    res.write(event([{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: a.tool, arguments: JSON.stringify(a.arguments ?? {}) } }] } }]));
  }
  res.write(event([{ index: 0, delta: {}, finish_reason: 'content' in a ? 'stop' : 'tool_calls' }]));
  res.end(`${event([], { usage: USAGE })}data: [DONE]\n\n`);
}
