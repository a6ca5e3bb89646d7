/**
 * A local webhook receiver for tests: records each POST it answers with 2xx, and can fail its
 * first attempts (a dropped connection, then 503s) to show a delivery retried.
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';

export interface Received {
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  body: Record<string, unknown>;
}

/** A receiver: records each POST it answers with 2xx; `failFirst` attempts fail first (a dropped connection, then 503s). */
export class Receiver {
  received: Received[] = [];
  attempts = 0;
  failFirst = 0;
  private server!: Server;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.attempts++;
        if (this.attempts <= this.failFirst) {
          // The first failure: the connection dropped (as a receiver that is not there); then 503s.
          if (this.attempts === 1) return void req.socket.destroy();
          return void res.writeHead(503).end('down');
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        this.received.push({ headers: req.headers, raw, body: JSON.parse(raw) as Record<string, unknown> });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}/hook`;
  }

  /** The events received of one kind, in order. */
  ofKind(kind: string): Received[] {
    return this.received.filter((r) => r.body.kind === kind);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** Whether a POST carries the signature of its raw body under the secret. */
export function signedWith(secret: string, r: Received): boolean {
  return r.headers['x-harness-signature'] === `sha256=${createHmac('sha256', secret).update(r.raw, 'utf8').digest('hex')}`;
}
