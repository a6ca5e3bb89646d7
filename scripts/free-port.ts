/**
 * A free TCP port for a server a test, benchmark or scratch harness starts. A module of its own,
 * with nothing but node:net: a test file that only wants a port does not load the worker.
 */
import { createServer } from 'node:net';

// Below Linux's ephemeral range (32768-60999 by default): a port taken from there may be the
// local port of some outgoing connection by the time a server binds it, and then the bind fails.
const PORT_LOW = 20_000;
const PORT_HIGH = 32_000;

/**
 * A TCP port nobody listens on right now, with the two above it free too (the embedded server
 * puts its HTTP API and metrics just above the UI port). Taken at random below the ephemeral
 * range, so neither another test's pick nor an outgoing connection is likely to hold it.
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = PORT_LOW + Math.floor(Math.random() * (PORT_HIGH - PORT_LOW - 2));
    if ((await canListen(port)) && (await canListen(port + 1)) && (await canListen(port + 2))) return port;
  }
  throw new Error(`no free TCP port in ${PORT_LOW}-${PORT_HIGH} after 200 tries`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}
