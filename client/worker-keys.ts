/**
 * Which model keys the embedded deployment's worker has, by name and never by value. The
 * process that starts that worker knows the environment it gives it, so it records the variables
 * keys are bound by (and the two settings that bind them); `run` then refuses a model the worker
 * has no key for before any session starts. Without the check the session starts, its first
 * model call fails, and only restarting the worker with the key cures it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { keyVariables } from '../activities/model/keys';

/** Beside the worker's pid file; rewritten by whichever process starts the next worker. */
const FILE = 'worker.keys.json';
// Where keys go, not keys: safe to write down as they are.
const SETTINGS = ['OPENAI_BASE_URL', 'HARNESS_MODEL_KEYS'];

/** Records, for the worker `pid` started with `env`, which key variables it has (each as "set"). */
export function recordWorkerKeys(home: string, pid: number, env: NodeJS.ProcessEnv): void {
  const known: Record<string, string> = {};
  for (const name of SETTINGS) if (env[name]) known[name] = env[name];
  for (const name of keyVariables(env)) if (env[name]) known[name] = 'set';
  try {
    writeFileSync(path.join(home, FILE), `${JSON.stringify({ pid, env: known })}\n`, { mode: 0o600 });
  } catch {
    // Only a check before sending depends on it; without the file the worker's first call tells.
  }
}

/** The key settings of worker `pid` as recorded when it started, or undefined when nobody recorded them. */
export function workerKeyEnv(home: string, pid: number): Record<string, string> | undefined {
  try {
    const recorded = JSON.parse(readFileSync(path.join(home, FILE), 'utf8')) as { pid?: unknown; env?: unknown };
    return recorded.pid === pid && recorded.env && typeof recorded.env === 'object' ? (recorded.env as Record<string, string>) : undefined;
  } catch {
    return undefined;
  }
}
