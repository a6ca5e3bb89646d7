/**
 * An OpenAI-compatible endpoint that streams every reply slowly (server-sent events, a piece of
 * text every `chunkMs`), as a real provider streams a long answer: a call outlives the
 * local-activity window and is handed on while its text still comes. A request that does not ask
 * to stream (the first call of a session whose tool mode is still to be decided) takes as long. It answers from the
 * conversation, so any number of turns need no script: a user message gets a `get_current_time`
 * call, a tool result gets the answer. It counts every request by session, and whether it was
 * answered whole, cut (`cut()`: the connection drops mid-stream, as a provider's can), refused
 * as rate limited (`limit()`: a 429 with Retry-After, after as long as a reply takes) or left by
 * the client.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** A request as the endpoint saw it. */
export interface StreamedRequest {
  session: string;
  purpose: string;
  callIndex: string;
  /** `streaming` until the reply ended: `done`, `cut` by the endpoint, or `gone` when the client left first. */
  status: 'streaming' | 'done' | 'cut' | 'limited' | 'gone';
}

export interface SlowStreamEndpoint {
  url: string;
  requests: StreamedRequest[];
  /** The session's chat requests (probes apart). */
  chats(sessionId: string): StreamedRequest[];
  /** Drops the connection of the session's next streamed reply after its second piece of text. */
  cut(sessionId: string): void;
  /** Answers the session's next request, once it took as long as a reply, with a 429 asking to wait `retryAfterSec`. */
  limit(sessionId: string, retryAfterSec: number): void;
  close(): Promise<void>;
}

/** The answer's text, and the words before the clock's call, in pieces. */
const ANSWER = ['The ', 'time ', 'was ', 'looked ', 'up; ', 'here ', 'it ', 'is. ', 'HARNESS_OK'];
const BEFORE_CALL = ['Let ', 'me ', 'look ', 'at ', 'the ', 'clock.'];

/** Starts the endpoint on a free port of 127.0.0.1. */
export async function startSlowStreamEndpoint(opts: { chunkMs: number }): Promise<SlowStreamEndpoint> {
  const requests: StreamedRequest[] = [];
  const cutting = new Set<string>();
  const limiting = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => void reply(req, res, raw));
  });

  async function reply(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    const body = JSON.parse(raw) as { stream?: boolean; messages: { role: string }[] };
    const record: StreamedRequest = {
      session: String(req.headers['x-harness-session'] ?? ''),
      purpose: String(req.headers['x-harness-purpose'] ?? 'chat'),
      callIndex: String(req.headers['x-harness-call-index'] ?? ''),
      status: 'streaming',
    };
    requests.push(record);
    let gone = false;
    res.on('close', () => {
      gone = !res.writableEnded;
      if (gone && record.status === 'streaming') record.status = 'gone';
    });
    // After a tool's result, the answer; else a call of the clock.
    const answering = body.messages[body.messages.length - 1]?.role === 'tool';
    const usage = { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 };
    const pieces = answering ? ANSWER : BEFORE_CALL;
    const limited = limiting.get(record.session);
    if (limited !== undefined && record.purpose !== 'probe') {
      limiting.delete(record.session);
      await sleep(opts.chunkMs * pieces.length);
      if (gone) return;
      record.status = 'limited';
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(limited) }).end(JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit_error' } }));
      return;
    }
    if (!body.stream) {
      // As slow as the stream, all at once at the end.
      await sleep(opts.chunkMs * pieces.length);
      if (gone) return;
      const message = answering ? { role: 'assistant', content: ANSWER.join('') } : clockCall();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'slow', object: 'chat.completion', created: 0, model: 'slow', choices: [{ index: 0, message, finish_reason: answering ? 'stop' : 'tool_calls' }], usage }));
      record.status = 'done';
      return;
    }
    const cutHere = cutting.delete(record.session);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`);
    const delta = (d: unknown, finish: string | null = null) => chunk({ id: 'slow', object: 'chat.completion.chunk', created: 0, model: 'slow', choices: [{ index: 0, delta: d, finish_reason: finish }] });
    delta({ role: 'assistant', content: '' });
    for (const [i, piece] of pieces.entries()) {
      await sleep(opts.chunkMs);
      if (gone) return;
      if (cutHere && i === 2) {
        record.status = 'cut';
        res.destroy();
        return;
      }
      delta({ content: piece });
    }
    if (!answering) delta({ tool_calls: [{ index: 0, ...clockCall().tool_calls[0] }] });
    delta({}, answering ? 'stop' : 'tool_calls');
    chunk({ id: 'slow', object: 'chat.completion.chunk', created: 0, model: 'slow', choices: [], usage });
    res.end('data: [DONE]\n\n');
    record.status = 'done';
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    chats: (sessionId) => requests.filter((r) => r.session === sessionId && r.purpose !== 'probe'),
    cut: (sessionId) => void cutting.add(sessionId),
    limit: (sessionId, retryAfterSec) => void limiting.set(sessionId, retryAfterSec),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function clockCall() {
  return { role: 'assistant', content: null, tool_calls: [{ id: 'call_clock', type: 'function', function: { name: 'get_current_time', arguments: '{"timezone":"UTC"}' } }] };
}
