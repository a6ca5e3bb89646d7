/**
 * Whether a worker already serves a HARNESS_HOME through its embedded database: the database
 * opens in one process only, and a worker holds it for as long as it runs.
 */
import { dataDirHolder } from '../activities/memory/lock';
import { embeddedDataDir } from '../machine/paths';
import { isHarnessWorker } from '../machine/pids';

/**
 * True when a worker started by hand (`harness worker`, or a `harness dev` that found a
 * background worker running) holds this home's embedded database: it polls, and a background
 * worker would only wait behind it for the database (workers/open-store.ts). Never so with
 * DATABASE_URL, where workers share Postgres.
 */
export async function workerHoldsDatabase(home: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  if (env.DATABASE_URL) return false;
  const holder = await dataDirHolder(embeddedDataDir(home));
  return holder !== undefined && holder !== process.pid && isHarnessWorker(holder, home);
}
