/**
 * The worker's connection, waited for: a worker started before its server (a stack coming up,
 * a cluster restarting, a name that resolves once the server's container is up) says in one
 * line what is wrong and tries again with backoff, for as long as it runs, instead of ending
 * with the SDK's transport error and its stack. Errors that waiting cannot cure still end it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { NativeConnection } from '@temporalio/worker';
import { connectWorker, tcpProbe } from '../client/temporal';
import { type TemporalSettings } from '../client/temporal-settings';

/** The longest pause between two tries, and how often an unchanged reason is said again. */
const MAX_BACKOFF_MS = 8_000;
const SAY_AGAIN_MS = 30_000;

/** Whether the SDK could not reach the server at all (as opposed to refusing the connection it made). */
function isTransportError(err: unknown): boolean {
  return err instanceof Error && (err.name === 'TransportError' || /tonic::transport|ConnectError/.test(err.message));
}

/** Why the address cannot be reached, in the words the other waits use. */
async function reasonFor(s: TemporalSettings, err: Error): Promise<string> {
  const tcp = await tcpProbe(s.address, 2_000);
  if (tcp === 'refused') return 'connection refused';
  if (tcp === 'unresolved') return 'host not found';
  if (tcp === 'timeout') return 'no TCP connection within 2 s';
  return (err.message.split('\n')[0] ?? '').slice(0, 200);
}

/** Connects, waiting through an unreachable server; `log` hears each new reason (and the same one every 30 s). */
export async function connectPatiently(s: TemporalSettings, log: (line: string) => void, connect = connectWorker): Promise<NativeConnection> {
  let backoff = 500;
  let said = '';
  let saidAt = 0;
  let waited = false;
  for (;;) {
    try {
      const connection = await connect(s);
      if (waited) log(`Temporal at ${s.address} answers; connected`);
      return connection;
    } catch (err) {
      if (!isTransportError(err)) throw err;
      const reason = await reasonFor(s, err as Error);
      const hint = s.embedded ? 'start the embedded server with `harness dev`, or set TEMPORAL_ADDRESS' : 'check TEMPORAL_ADDRESS, or start the server';
      if (reason !== said || Date.now() - saidAt >= SAY_AGAIN_MS) {
        log(`waiting: Temporal at ${s.address} is unreachable (${reason}); retrying until it answers (${hint}; Ctrl-C stops)`);
        said = reason;
        saidAt = Date.now();
      }
      waited = true;
      await sleep(backoff);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}
