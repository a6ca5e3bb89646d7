/**
 * The worker's message store, opened before the worker polls. Every turn reads and writes it,
 * so a problem shows at start and the first turn does not wait for the database to open.
 *
 * With DATABASE_URL the database is shared: one that is down is said in one line and the worker
 * polls anyway, its turns waiting with STORE_UNAVAILABLE until it answers, as every worker
 * sharing it would. The embedded database opens in one process only, and a worker without it
 * would take tasks it can only fail (a session's first store write, memory calls), so such a
 * worker does not poll at all: while another process holds the folder it says so and waits, a
 * standby that takes over the moment the holder exits; any other reason it cannot open ends it.
 */
import type { Database } from '../activities/memory/database';
import { UserError } from '../machine/errors';

/** What became of the store: open, or the worker was asked to stop while it waited. */
type StoreOpening = 'open' | 'stopped';

/** Opens the store as described above; rejects with a UserError when the embedded database cannot be opened. */
export async function openStore(memory: Database, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<StoreOpening> {
  if (env.DATABASE_URL) {
    await memory.open().then(
      () => log('message store ready (DATABASE_URL)'),
      (err: Error) => log(`${err.message.split('\n')[0]} (turns wait with STORE_UNAVAILABLE until it answers)`),
    );
    return 'open';
  }
  // Ctrl-C or `harness dev --stop` while waiting: the SDK's own signal handling starts only with
  // the worker, so stop here, quietly.
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await memory.open({
      signal: stop.signal,
      onWait: (refusal) => {
        const why = refusal.message.split('\n')[0]!.replace(/; only one worker can open it.*$/, '');
        log(`${why}; waiting for it before polling (this worker takes over when that process exits; set DATABASE_URL to run both)`);
      },
    });
  } catch (err) {
    if (stop.signal.aborted) return 'stopped';
    throw new UserError(
      `${(err as Error).message.split('\n')[0]}; the worker does not poll without its message store`,
      'move the folder aside to start with an empty database, or set DATABASE_URL to use Postgres',
    );
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  log('message store ready (embedded PGlite)');
  return 'open';
}
