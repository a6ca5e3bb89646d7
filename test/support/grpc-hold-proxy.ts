/**
 * A gRPC proxy (HTTP/2 without TLS) in front of a Temporal server that holds back, unanswered and
 * never forwarded, the first call of a method whose request carries a given text (a workflow id in
 * a command, say): what the server sees of a worker that died after doing the work and before
 * reporting it. Every other call passes through unchanged. Only unary calls (all of Temporal's
 * workflow service) are read whole before they go on.
 */
import http2 from 'node:http2';
import type net from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface HoldProxy {
  /** host:port to point TEMPORAL_ADDRESS at. */
  address: string;
  /** From now on, hold the first call of a method matching `method` whose request holds `text`; resolves when one is held. */
  holdFirst(method: RegExp, text: string): Promise<void>;
  close(): Promise<void>;
}

/** The messages of a gRPC body: each frame's, unzipped when its flag says it is compressed (workers send gzip). */
function messages(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at + 5 <= body.length; ) {
    const size = body.readUInt32BE(at + 1);
    const data = body.subarray(at + 5, at + 5 + size);
    try {
      out.push(body[at] === 1 ? gunzipSync(data) : data);
    } catch {
      out.push(data);
    }
    at += 5 + size;
  }
  return out;
}

export async function startHoldProxy(target: string): Promise<HoldProxy> {
  let rule: { method: RegExp; text: Buffer; caught: () => void } | undefined;
  const sessions = new Set<http2.ServerHttp2Session>();
  const upstream = http2.connect(`http://${target}`);
  upstream.on('error', () => undefined);
  const server = http2.createServer();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
    s.on('error', () => undefined);
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const body = Buffer.concat(chunks);
      const r = rule;
      if (r && r.method.test(String(headers[':path'])) && messages(body).some((m) => m.includes(r.text))) {
        rule = undefined;
        r.caught();
        return; // never answered: the caller waits until it is gone
      }
      passOn(stream, headers, body);
    });
  });

  function passOn(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, body: Buffer): void {
    if (stream.closed || stream.destroyed) return;
    const call = upstream.request(headers);
    call.on('error', () => {
      if (!stream.headersSent && !stream.closed) stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '14', 'grpc-message': 'proxy: upstream unreachable' }, { endStream: true });
      else stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    });
    call.end(body);
    let trailers: http2.OutgoingHttpHeaders = {};
    call.on('trailers', (t) => (trailers = t));
    call.on('response', (h) => {
      if (stream.closed) return;
      if (h['grpc-status'] !== undefined) {
        stream.respond(h, { endStream: true });
        return;
      }
      stream.respond(h, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers(trailers));
      call.pipe(stream);
    });
    stream.on('close', () => {
      if (!call.closed) call.close(http2.constants.NGHTTP2_CANCEL);
    });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    address: `127.0.0.1:${port}`,
    holdFirst(method, text) {
      return new Promise<void>((resolve) => (rule = { method, text: Buffer.from(text), caught: resolve }));
    },
    async close() {
      rule = undefined;
      for (const s of sessions) s.destroy();
      upstream.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
