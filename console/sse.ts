/**
 * One Server-Sent Events response: the headers, a comment every 15 s so proxies keep it open, and
 * its end. `run` writes `data:` events until it is done (or the page goes away, which aborts its
 * signal); then one last event says how it ended: `closed`, `unknown` (no such session or turn) or
 * `failed` with the first line of the error.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export type SseEnd = 'closed' | 'unknown';

export async function serveSse(req: IncomingMessage, res: ServerResponse, run: (send: (data: unknown) => void, signal: AbortSignal) => Promise<SseEnd>): Promise<void> {
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', Connection: 'keep-alive' });
  const stop = new AbortController();
  req.on('close', () => stop.abort());
  const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
  try {
    const end = await run((data) => res.write(`data: ${JSON.stringify(data)}\n\n`), stop.signal);
    res.write(`event: ${end}\ndata: {}\n\n`);
  } catch (err) {
    if (!stop.signal.aborted) res.write(`event: failed\ndata: ${JSON.stringify({ error: (err as Error).message.split('\n')[0] })}\n\n`);
  } finally {
    clearInterval(ping);
    res.end();
  }
}
