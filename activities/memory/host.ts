/**
 * Where long-term memory lives for a worker: DATABASE_URL when set, otherwise the embedded
 * PGlite under HARNESS_HOME/pgdata, served over the Postgres wire protocol so the same `pg`
 * code runs. Opened on first use (a worker that never remembers starts no database) and
 * migrated once. PGlite allows one process per data folder: a second worker on the same
 * HARNESS_HOME gets MEMORY_UNAVAILABLE from the memory tools; set DATABASE_URL to share.
 */
import pg from 'pg';
import { embeddedDataDir, startEmbeddedPostgres, type EmbeddedPostgres } from './embedded';
import { MemoryStore } from './store';

export class MemoryHost {
  private opening?: Promise<MemoryStore>;
  private embedded?: EmbeddedPostgres;
  private pool?: pg.Pool;

  constructor(private readonly opts: { home: string; databaseUrl?: string }) {}

  /** The store, connected and migrated; rejects with MemoryUnavailableError when the database is down. */
  store(): Promise<MemoryStore> {
    this.opening ??= this.open().catch((err) => {
      this.opening = undefined; // try again on the next call: the database may come back
      throw err;
    });
    return this.opening;
  }

  private async open(): Promise<MemoryStore> {
    let url = this.opts.databaseUrl;
    if (!url) {
      this.embedded ??= await startEmbeddedPostgres({ dataDir: embeddedDataDir(this.opts.home) });
      url = this.embedded.url;
    }
    // Without a connect timeout a database that drops packets would hang recall.
    this.pool = new pg.Pool({ connectionString: url, max: 4, connectionTimeoutMillis: 5_000 });
    const store = new MemoryStore(this.pool);
    await store.migrate();
    return store;
  }

  async close(): Promise<void> {
    await this.pool?.end().catch(() => undefined);
    await this.embedded?.close();
  }
}
