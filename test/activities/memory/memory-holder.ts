/**
 * A separate worker process for the lock tests: opens the embedded memory of the home given
 * as argument, stores one memory, prints `ready <pid>` and keeps the database open until killed.
 * Run from TypeScript source through a transpiling require hook (see lock.test.ts).
 */
import { Database } from '../../../activities/memory/database';

async function main(): Promise<void> {
  const home = process.argv[process.argv.length - 1]!;
  const host = new Database({ home });
  const store = await host.store();
  await store.remember('held', 'holder', `written by the holder process ${process.pid}`);
  process.stdout.write(`ready ${process.pid}\n`);
  // The lock and the socket server do not keep the process alive by themselves.
  setInterval(() => undefined, 60_000);
  process.once('SIGTERM', () => {
    void host.close().then(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  process.stdout.write(`failed ${(err as Error).message}\n`);
  process.exit(1);
});
