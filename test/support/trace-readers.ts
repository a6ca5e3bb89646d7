/**
 * The readers of a session's history besides `harness trace` and `harness cost`, as they run in
 * production: the console's trace endpoint and live stream (over HTTP, with its token) on a client made the way
 * `harness console` makes it, and the continuous OTLP export `harness dev` does, to a receiver
 * that takes OTLP/HTTP protobuf bodies and keeps them.
 */
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { HarnessClient } from '../../api/client';
import { exportClosedTurns, type PassResult } from '../../client/otlp-export';
import { connectClient } from '../../client/temporal';
import { temporalSettings } from '../../client/temporal-settings';
import { startConsole, type ConsoleServer } from '../../console/server';
import { TEST_DATABASE_URL, type TestHarness } from './harness';

const TOKEN = 'trace-readers-token-0123456789abcdef';

/** A client as the CLI, the console and `harness dev` connect (client/temporal.ts). */
export function productionClient(h: TestHarness): Promise<Client> {
  return connectClient(temporalSettings({ TEMPORAL_ADDRESS: h.address }));
}

/** The console on a production client; `trace(id)` GETs /api/trace as the page does. */
export async function startTraceConsole(
  h: TestHarness,
  client: Client,
): Promise<{ trace(id: string, full?: boolean): Promise<{ status: number; body: string }>; events(id: string): Promise<string>; close(): Promise<void> }> {
  const server: ConsoleServer = await startConsole(
    { harness: new HarnessClient(client, { taskQueue: h.taskQueue }), home: h.home, env: { DATABASE_URL: TEST_DATABASE_URL }, taskQueue: h.taskQueue, namespace: 'default' },
    { host: '127.0.0.1', port: 0, token: TOKEN },
  );
  return {
    async trace(id, full = false) {
      const res = await fetch(`${server.base}/api/trace?id=${encodeURIComponent(id)}${full ? '&full=1' : ''}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      return { status: res.status, body: await res.text() };
    },
    // The session view's live stream of a closed turn: its spans, then `closed` and the end of the stream.
    async events(id) {
      const res = await fetch(`${server.base}/api/events?id=${encodeURIComponent(id)}`, { headers: { Authorization: `Bearer ${TOKEN}` }, signal: AbortSignal.timeout(60_000) });
      return res.text();
    },
    close: () => server.close(),
  };
}

/** An OTLP/HTTP receiver on a free port: every request body it was sent, as text (protobuf keeps strings as UTF-8). */
export async function startReceiver(): Promise<{ url: URL; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      // An empty ExportTraceServiceResponse: everything accepted.
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return { url: new URL(`http://127.0.0.1:${port}/v1/traces`), bodies, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * `harness dev`'s export passes until one of them sends `turnId` (visibility lists a turn a
 * little after it closes) or fails; the last pass's result.
 */
export async function exportUntilSent(h: TestHarness, client: Client, url: URL, home: string, turnId: string): Promise<PassResult> {
  const log: string[] = [];
  for (let pass = 0; ; pass++) {
    const r = await exportClosedTurns({ client, url, home: path.join(home, 'otlp'), taskQueue: h.taskQueue, env: { DATABASE_URL: TEST_DATABASE_URL }, log: (l) => log.push(l) });
    if (r.error || r.exported.some((t) => t.turnId === turnId) || pass >= 60) return r;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
