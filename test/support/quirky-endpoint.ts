/**
 * An OpenAI-compatible endpoint with the quirks real providers have, each switchable: replies
 * without usage, cut at the cap (`finish_reason: length`), with `reasoning_content` (and, like
 * DeepSeek, a 400 for any request that sends reasoning back), calls without ids, content and
 * calls together, empty replies; and, for auto's probe, either a model with native tool calls or
 * a server that drops the `tools` field (as llama.cpp does with a template without tool support).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** One reply: the assistant message, why it stopped (default `stop`), and its usage (`null`: none sent). */
export interface QuirkyReply {
  message: Record<string, unknown>;
  finish_reason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

/** A request as the endpoint got it. */
export type QuirkyRequest = { headers: IncomingMessage['headers']; body: Record<string, unknown> & { messages: Array<Record<string, unknown>> } };

/** A running endpoint. */
export interface QuirkyEndpoint {
  url: string;
  /** Queues a session's replies (the session comes in x-harness-session). */
  script(sessionId: string, replies: QuirkyReply[]): void;
  /** A session's requests, probes apart. */
  requests(sessionId: string): QuirkyRequest[];
  /** A session's probe requests. */
  probes(sessionId: string): QuirkyRequest[];
  close(): Promise<void>;
}

/** Starts the endpoint on a free port of 127.0.0.1; `dropTools`: answer probes like a server that ignores the tools field. */
export async function startQuirkyEndpoint(opts: { dropTools?: boolean } = {}): Promise<QuirkyEndpoint> {
  const queues = new Map<string, QuirkyReply[]>();
  const seen = new Map<string, QuirkyRequest[]>();
  const probes = new Map<string, QuirkyRequest[]>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as QuirkyRequest['body'];
      const session = String(req.headers['x-harness-session'] ?? '');
      const entry = { headers: req.headers, body };
      if (body.messages.some((m) => 'reasoning_content' in m)) return answer(res, 400, { error: { message: 'The reasoning_content of a reply must not be sent back' } });
      if (req.headers['x-harness-purpose'] === 'probe') {
        probes.set(session, [...(probes.get(session) ?? []), entry]);
        return answer(res, 200, completion(probeReply(body, opts.dropTools === true)));
      }
      seen.set(session, [...(seen.get(session) ?? []), entry]);
      const next = queues.get(session)?.shift();
      if (!next) return answer(res, 400, { error: { message: `no reply left for ${session}` } });
      answer(res, 200, completion(next));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    script: (sessionId, replies) => queues.set(sessionId, [...replies]),
    requests: (sessionId) => seen.get(sessionId) ?? [],
    probes: (sessionId) => probes.get(sessionId) ?? [],
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A model with native calls calls the probe's tool; a server dropping tools answers text, its prompt counted without them. */
function probeReply(body: QuirkyRequest['body'], dropTools: boolean): QuirkyReply {
  const tools = (body.tools ?? []) as { function: { name: string } }[];
  if (body.response_format) return { message: { role: 'assistant', content: '{"answer": "ok"}' } };
  if (tools.length && !dropTools) {
    return { message: { role: 'assistant', content: null, tool_calls: [{ id: 'p', type: 'function', function: { name: tools[0]!.function.name, arguments: '{}' } }] }, finish_reason: 'tool_calls' };
  }
  const prompt = Math.ceil(JSON.stringify(body.messages).length / 4) + (dropTools ? 0 : JSON.stringify(tools).length);
  return { message: { role: 'assistant', content: 'It is noon.' }, usage: { prompt_tokens: prompt, completion_tokens: 3, total_tokens: prompt + 3 } };
}

function completion(r: QuirkyReply): Record<string, unknown> {
  const usage = r.usage === null ? {} : { usage: r.usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } };
  return { id: 'q', object: 'chat.completion', created: 0, model: 'quirky', choices: [{ index: 0, finish_reason: r.finish_reason ?? 'stop', message: { role: 'assistant', ...r.message } }], ...usage };
}

function answer(res: ServerResponse, status: number, payload: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
}
