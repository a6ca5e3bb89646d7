/** Stopping a benchmark's child process: SIGTERM, up to 20 s for it to drain, then SIGKILL. */
import type { ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

export async function stopChildProcess(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => c.once('exit', () => resolve()));
  c.kill('SIGTERM');
  await Promise.race([gone, sleep(20_000)]);
  if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
