/** A model endpoint that accepts every request and never answers: a hung provider. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

/** A running silent endpoint. */
export interface SilentEndpoint {
  /** Base URL for an OpenAI-compatible client (`http://127.0.0.1:<port>/v1`). */
  url: string;
  /** Requests received so far (path and x-harness-call-index). */
  requests: { path: string; callIndex?: string }[];
  close(): Promise<void>;
}

/** Starts the endpoint on a free port of 127.0.0.1. */
export async function startSilentEndpoint(): Promise<SilentEndpoint> {
  const requests: SilentEndpoint['requests'] = [];
  const held: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const callIndex = req.headers['x-harness-call-index'];
    requests.push({ path: req.url ?? '', ...(typeof callIndex === 'string' ? { callIndex } : {}) });
    req.resume(); // read the body, answer nothing
    held.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
