/**
 * A throwaway schema on the test Postgres reached through a freeze proxy (a network that stops
 * forwarding bytes on demand), with everything a test opens on it closed afterwards. Registers
 * its own beforeAll/afterAll; the memory and message-store timeout tests share it.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { Database } from '../../activities/memory/database';
import { startFreezeProxy, type FreezeProxy } from './freeze-proxy';
import { TEST_DATABASE_URL } from '../activities/memory/backends';

export interface FrozenDatabase {
  readonly proxy: FreezeProxy;
  /** A direct connection (not through the proxy) to look at the schema's rows. */
  readonly admin: pg.Client;
  readonly schema: string;
  /** The proxy's connection string, confined to the schema. */
  url(): string;
  /** Closes it after the file's tests. */
  track<T extends pg.Pool | Database>(thing: T): T;
  /** Removes the folder after the file's tests. */
  trackHome(home: string): string;
}

export function frozenDatabase(prefix: string): FrozenDatabase {
  let proxy: FreezeProxy | undefined;
  let admin: pg.Client | undefined;
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const pools: pg.Pool[] = [];
  const hosts: Database[] = [];
  const homes: string[] = [];

  beforeAll(async () => {
    proxy = await startFreezeProxy();
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await admin.query(`CREATE SCHEMA ${schema}`);
  });

  afterAll(async () => {
    proxy?.thaw();
    for (const h of hosts) await h.close();
    await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
    await proxy?.close();
    await admin?.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin?.end();
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  });

  return {
    get proxy() {
      return proxy!;
    },
    get admin() {
      return admin!;
    },
    schema,
    url: () => `${proxy!.url()}?options=${encodeURIComponent(`-c search_path=${schema},public`)}`,
    track(thing) {
      if (thing instanceof pg.Pool) pools.push(thing);
      else hosts.push(thing as Database);
      return thing;
    },
    trackHome(home) {
      homes.push(home);
      return home;
    },
  };
}
