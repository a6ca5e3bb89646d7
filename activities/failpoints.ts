/**
 * Failpoints for crash tests: named places where a worker can be made to pause, so a test can
 * SIGKILL it at exactly that moment (after a tool's side effect, before its result is recorded).
 * Off unless the worker's environment sets HARNESS_FAILPOINTS, e.g.
 * `after-tool:write_file=4000,after-tool:remember_longterm=4000` (pause in milliseconds).
 * On reaching one, the worker writes `<home>/failpoints/<name>` so the test knows where it is.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Pauses at the named failpoint when it is configured; does nothing otherwise. */
type Failpoint = (name: string) => Promise<void>;

/** The failpoints of a worker, from its environment. */
export function failpoints(env: Record<string, string | undefined>, home: string): Failpoint {
  const pauses = new Map<string, number>();
  for (const entry of (env.HARNESS_FAILPOINTS ?? '').split(',')) {
    const eq = entry.lastIndexOf('=');
    if (eq > 0) pauses.set(entry.slice(0, eq).trim(), Number(entry.slice(eq + 1)) || 0);
  }
  if (pauses.size === 0) return async () => undefined;
  return async (name) => {
    const ms = pauses.get(name);
    if (ms === undefined) return;
    const file = failpointFile(home, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, String(process.pid));
    await sleep(ms);
  };
}

/** The file a worker writes when it reaches the named failpoint. */
export function failpointFile(home: string, name: string): string {
  return path.join(home, 'failpoints', name.replace(/[^A-Za-z0-9_.-]/g, '_'));
}
