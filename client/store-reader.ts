/**
 * Opens the message store the workers write to, for readers in other processes (`trace --full`,
 * the console, `harness dev`'s OTLP export): DATABASE_URL, else the embedded PGlite under
 * HARNESS_HOME, read through the process that holds it when one does (machine/store-endpoint.ts).
 * Never creates a database.
 */
import { existsSync } from 'node:fs';
import { embeddedDataDir } from '../machine/paths';
import { readStoreEndpoint } from '../machine/store-endpoint';
import type { OpenedStore } from '../history/trace/payloads';

export type { OpenedStore };

/** Opens the worker's message store without creating one: an embedded folder that does not exist is a problem, not a new database. */
export async function openMessageStore(home: string, env: NodeJS.ProcessEnv): Promise<OpenedStore> {
  const databaseUrl = env.DATABASE_URL;
  // Where the embedded database lives, checked before loading it.
  const dataDir = embeddedDataDir(home);
  if (!databaseUrl && !existsSync(dataDir)) {
    return { problem: `no message store at ${dataDir} (set DATABASE_URL or HARNESS_HOME as the worker has them)` };
  }
  // Another process holds the embedded database (a worker): read through the server it runs.
  if (!databaseUrl) {
    const served = await servedStore(dataDir);
    if (served) return served;
  }
  // Loaded only for --full: the database client and embedded Postgres are heavy to load.
  const { Database } = await import('../activities/memory/database');
  const host = Database.fromEnv(home, env);
  try {
    const store = await host.messages();
    return { store, close: () => host.close() };
  } catch (err) {
    await host.close().catch(() => undefined);
    return { problem: (err as Error).message.split('\n')[0]! };
  }
}

/**
 * The message store of an embedded database another process holds and serves (see
 * machine/store-endpoint.ts), or undefined when nobody holds it. Only reads: no migration.
 */
async function servedStore(dataDir: string): Promise<OpenedStore | undefined> {
  const { dataDirHolder } = await import('../activities/memory/lock');
  const holder = await dataDirHolder(dataDir);
  if (holder === undefined) return undefined;
  const endpoint = readStoreEndpoint(dataDir);
  if (endpoint?.pid !== holder) return { problem: `the embedded database ${dataDir} is held by process ${holder}, which does not serve it (a worker from before store sharing? restart it with \`harness dev --stop\`)` };
  const [{ memoryPool }, { PgMessageStore }] = await Promise.all([import('../activities/memory/database'), import('../activities/store/pg-message-store')]);
  const pool = memoryPool(`postgres://postgres@127.0.0.1:${endpoint.port}/postgres`);
  // Unnamed statements: prepared ones would stay in the holder's one backend after this reader left.
  return { store: new PgMessageStore(pool, { prepare: false }), close: () => pool.end() };
}
