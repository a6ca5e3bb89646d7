/**
 * Connections to the embedded PGlite from the process that runs it, without TCP: `pg` talks
 * the same wire protocol over an in-memory stream pair to a PGLiteSocketHandler, the handler the
 * socket server gives each TCP connection. A worker's store write then costs no socket round
 * trip and no wake-ups of the event loop for the socket: a step's write takes about 0.9 ms
 * in-process against 1.04 over TCP, and 0.96 against 1.30 ms of CPU (`npm run bench:store`).
 * Other processes (trace --full, the console, the OTLP export) still connect over TCP.
 *
 * Every connection, in-process or TCP, goes through the socket server's one query queue: PGlite
 * is a single backend, and the queue keeps other connections' statements out of a transaction
 * one connection has open. So the in-process handlers take the server's queue, not one of their own.
 */
import { Duplex } from 'node:stream';
import { PGLiteSocketHandler, type PGLiteSocketHandlerOptions, type PGLiteSocketServer } from '@electric-sql/pglite-socket';

type QueryQueue = PGLiteSocketHandlerOptions['queryQueue'];

/** One end of an in-memory connection: what `pg` and the handler use of a net.Socket. */
class PipeEnd extends Duplex {
  peer!: PipeEnd;
  readonly remoteAddress = 'in-process';
  readonly remotePort = 0;

  constructor() {
    // A closed read side closes the write side too, as a socket whose peer hung up.
    super({ allowHalfOpen: false });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.peer.push(chunk);
    done();
  }

  override _final(done: (err?: Error | null) => void): void {
    this.peer.push(null);
    done();
  }

  override _read(): void {
    // Data is pushed by the peer's writes.
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    if (!this.peer.destroyed) this.peer.destroy();
    done(err);
  }

  /** pg calls connect(port, host) on its stream; an in-memory pair is connected already. */
  connect(): this {
    process.nextTick(() => this.emit('connect'));
    return this;
  }

  // Socket options that have no meaning without a socket.
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

/** The server's query queue; fails loudly if the pinned pglite-socket stops keeping it there. */
function queueOf(server: PGLiteSocketServer): QueryQueue {
  const queue = (server as unknown as { queryQueue?: QueryQueue }).queryQueue;
  if (!queue || typeof queue.enqueue !== 'function') {
    throw new Error('@electric-sql/pglite-socket keeps no queryQueue on its server: in-process connections need that queue (was the pinned version changed?)');
  }
  return queue;
}

/** Opens in-process connections to a started socket server's database, and closes them all. */
export class InProcessConnections {
  private readonly queue: QueryQueue;
  private readonly handlers = new Set<PGLiteSocketHandler>();

  constructor(server: PGLiteSocketServer) {
    this.queue = queueOf(server);
  }

  /** A new connection: the stream `pg` is given (its `stream` option), the handler attached to the other end. */
  readonly open = (): Duplex => {
    const client = new PipeEnd();
    const server = new PipeEnd();
    client.peer = server;
    server.peer = client;
    const handler = new PGLiteSocketHandler({ queryQueue: this.queue, closeOnDetach: true });
    this.handlers.add(handler);
    handler.addEventListener('close', () => this.handlers.delete(handler));
    handler.addEventListener('error', () => this.handlers.delete(handler));
    // attach only registers listeners; it resolves at once.
    void handler.attach(server as unknown as Parameters<PGLiteSocketHandler['attach']>[0]);
    return client;
  };

  /** Detaches every connection: a transaction one left open is rolled back, its stream closed. */
  async close(): Promise<void> {
    await Promise.all([...this.handlers].map((h) => h.detach(true)));
    this.handlers.clear();
  }
}
