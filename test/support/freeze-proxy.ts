/**
 * A TCP proxy in front of a database that can be frozen: while frozen it accepts connections
 * and keeps every socket open but forwards no byte in either direction, which is what a client
 * sees of a stopped server (SIGSTOP) or a black-holed network. Thawing delivers what was held
 * back, so a query sent while frozen still reaches the server afterwards, as it would for real.
 * Tests use it instead of stopping the Postgres server other tests share.
 */
import net from 'node:net';

/** A running proxy. */
export interface FreezeProxy {
  port: number;
  /** A connection string for the proxy, with the target's user and database. */
  url(database?: string): string;
  /** Stops forwarding bytes (connections stay open). */
  freeze(): void;
  /** Forwards again, first everything held back while frozen. */
  thaw(): void;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** Starts a proxy on a free 127.0.0.1 port forwarding to target (default the local test Postgres). */
export async function startFreezeProxy(target: { host: string; port: number } = { host: '127.0.0.1', port: 5432 }): Promise<FreezeProxy> {
  let frozen = false;
  let accepted = 0;
  const held: (() => void)[] = [];
  const sockets = new Set<net.Socket>();

  // Writes now, or when thawed; order is kept because held writes run in arrival order.
  const forward = (to: net.Socket) => (chunk: Buffer) => {
    const write = () => {
      if (!to.destroyed) to.write(chunk);
    };
    if (frozen) held.push(write);
    else write();
  };

  const server = net.createServer((client) => {
    accepted++;
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.on('data', forward(upstream));
    upstream.on('data', forward(client));
    // A close is forwarded too, but like data only once thawed: a frozen peer does not hang up.
    // end(), not destroy(): what was held back is flushed first, so a query sent before the
    // client gave up still reaches the server (the late write a real freeze produces).
    const closeOther = (other: net.Socket) => () => {
      const end = () => other.end();
      if (frozen) held.push(end);
      else end();
    };
    client.on('close', closeOther(upstream));
    upstream.on('close', closeOther(client));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    url: (database = 'test') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    freeze() {
      frozen = true;
    },
    thaw() {
      frozen = false;
      for (const run of held.splice(0)) run();
    },
    connections: () => accepted,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
