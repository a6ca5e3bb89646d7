/**
 * A gRPC proxy (HTTP/2 without TLS) in front of a Temporal server that can answer badly on
 * purpose, for the gRPC codes that are hard to get from a real server on demand: `fail` answers
 * calls with a status of our choosing (RESOURCE_EXHAUSTED, UNAVAILABLE, FAILED_PRECONDITION …),
 * `hold` accepts calls and answers none until cleared (so clients meet their own deadlines, as
 * with a server that hangs), and `down` drops every connection and refuses new ones (a server
 * restarting). Otherwise each call is passed through unchanged, trailers included.
 */
import http2 from 'node:http2';
import type net from 'node:net';

/** A proxy in front of one server. */
export interface FaultProxy {
  /** host:port to point TEMPORAL_ADDRESS at. */
  address: string;
  /** Answer calls whose path matches `methods` (all by default) with this gRPC status and message. */
  fail(code: number, message: string, methods?: RegExp): void;
  /** Answer nothing to calls whose path matches `methods` until cleared; then pass them on. */
  hold(methods?: RegExp): void;
  /** Drop every connection and refuse new ones until cleared. */
  down(): Promise<void>;
  /** Back to passing everything through. */
  clear(): Promise<void>;
  /** How many calls met a fault, by method path. */
  faulted: Map<string, number>;
  close(): Promise<void>;
}

type Fault = { kind: 'fail'; code: number; message: string; methods?: RegExp } | { kind: 'hold'; methods?: RegExp };

/** A grpc-message header value: percent-encoded where the gRPC spec asks (outside printable ASCII, and `%`). */
function grpcMessage(text: string): string {
  return Array.from(Buffer.from(text, 'utf8'))
    .map((b) => (b >= 0x20 && b <= 0x7e && b !== 0x25 ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
}

/** Starts a proxy on a free 127.0.0.1 port in front of `target` (host:port). */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  let fault: Fault | undefined;
  let held: (() => void)[] = [];
  const faulted = new Map<string, number>();
  const sessions = new Set<http2.ServerHttp2Session>();
  let upstream: http2.ClientHttp2Session | undefined;
  const toServer = () => {
    if (!upstream || upstream.closed || upstream.destroyed) {
      upstream = http2.connect(`http://${target}`);
      upstream.on('error', () => undefined);
    }
    return upstream;
  };

  const server = http2.createServer();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
    s.on('error', () => undefined);
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => undefined);
    const method = String(headers[':path']);
    const f = fault && (!fault.methods || fault.methods.test(method)) ? fault : undefined;
    if (f) faulted.set(method, (faulted.get(method) ?? 0) + 1);
    if (f?.kind === 'fail') {
      stream.resume(); // the request body is not wanted
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(f.code), 'grpc-message': grpcMessage(f.message) },
        { endStream: true },
      );
      return;
    }
    const forward = () => {
      if (!stream.closed && !stream.destroyed) passOn(stream, headers);
    };
    if (f?.kind === 'hold') held.push(forward);
    else forward();
  });

  /** One call to the server and its answer back: headers, messages and trailers as they come. */
  function passOn(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): void {
    const call = toServer().request(headers);
    call.on('error', () => {
      if (!stream.headersSent && !stream.closed) {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '14', 'grpc-message': 'proxy: upstream unreachable' }, { endStream: true });
      } else stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    });
    stream.pipe(call);
    let trailers: http2.OutgoingHttpHeaders = {};
    call.on('trailers', (t) => (trailers = t));
    call.on('response', (h) => {
      if (stream.closed) return;
      if (h['grpc-status'] !== undefined) {
        stream.respond(h, { endStream: true }); // a trailers-only answer
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

  const listen = (port: number) => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen(0);
  const port = (server.address() as net.AddressInfo).port;
  let listening = true;

  return {
    address: `127.0.0.1:${port}`,
    faulted,
    fail(code, message, methods) {
      fault = { kind: 'fail', code, message, ...(methods ? { methods } : {}) };
    },
    hold(methods) {
      fault = { kind: 'hold', ...(methods ? { methods } : {}) };
    },
    async down() {
      listening = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sessions) s.destroy();
      await closed;
    },
    async clear() {
      fault = undefined;
      for (const run of held.splice(0)) run();
      held = [];
      if (!listening) {
        await listen(port);
        listening = true;
      }
    },
    async close() {
      fault = undefined;
      held = [];
      for (const s of sessions) s.destroy();
      upstream?.destroy();
      if (listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
