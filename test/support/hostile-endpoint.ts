/**
 * An OpenAI-compatible endpoint that answers with whatever the test hands it, shapes no honest
 * provider sends included (arguments as an object, a number as a name, content as an array): what
 * a compromised or buggy provider can put in front of the harness. A request that asks to stream
 * gets the message as one event of a server-sent stream (the shape that cost the client's own
 * stream reader minutes on a large reply).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/**
 * One reply: the assistant `message` object as raw JSON text (so 1e309 or a lone surrogate stays
 * as written), or a value; or `{ $status, $body }`, an HTTP error with that body as it is.
 */
export type HostileReply = string | Record<string, unknown>;

/** A running endpoint. */
export interface HostileEndpoint {
  /** Base URL for an OpenAI-compatible client. */
  url: string;
  /** Queues the replies of a session, answered in order (the session id comes in x-harness-session). */
  script(sessionId: string, replies: HostileReply[]): void;
  /** The request bodies a session sent, in order. */
  requests(sessionId: string): Array<{ messages: Array<{ role: string; content: unknown }> }>;
  close(): Promise<void>;
}

const PROBE_REPLY = JSON.stringify({
  id: 'probe',
  object: 'chat.completion',
  created: 0,
  model: 'hostile',
  choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'p', type: 'function', function: { name: 'get_current_time', arguments: '{}' } }] } }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

/** Starts the endpoint on a free port of 127.0.0.1. */
export async function startHostileEndpoint(): Promise<HostileEndpoint> {
  const queues = new Map<string, HostileReply[]>();
  const seen = new Map<string, Array<{ messages: Array<{ role: string; content: unknown }> }>>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const session = String(req.headers['x-harness-session'] ?? '');
      // auto's probe (a session's first reply had no tool call) is answered as a model with
      // native tool calls would: it takes none of the replies the test queued.
      if (req.headers['x-harness-purpose'] === 'probe') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(PROBE_REPLY);
        return;
      }
      const request = JSON.parse(body) as { stream?: boolean; messages: Array<{ role: string; content: unknown }> };
      seen.set(session, [...(seen.get(session) ?? []), request]);
      const next = queues.get(session)?.shift();
      if (next === undefined) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no reply left for ${session}` } }));
        return;
      }
      if (typeof next === 'object' && typeof next.$status === 'number') {
        res.writeHead(next.$status, { 'content-type': 'application/json' }).end(String(next.$body));
        return;
      }
      const message = typeof next === 'string' ? next : JSON.stringify(next);
      const usage = '{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}';
      if (request.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta: string, rest = '') => `data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"hostile","choices":[{"index":0,"delta":${delta}${rest}}]}\n\n`;
        res.write(chunk(message));
        res.end(`${chunk('{}', ',"finish_reason":"stop"')}data: {"id":"x","object":"chat.completion.chunk","created":0,"model":"hostile","choices":[],"usage":${usage}}\n\ndata: [DONE]\n\n`);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"id":"x","object":"chat.completion","created":0,"model":"hostile","choices":[{"index":0,"finish_reason":"stop","message":${message}}],"usage":${usage}}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    script: (sessionId, replies) => queues.set(sessionId, [...replies]),
    requests: (sessionId) => seen.get(sessionId) ?? [],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
