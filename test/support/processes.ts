/** Spawning real harness processes (workers, the CLI) from tests, and cleaning them up. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Repository root. */
export const ROOT = path.resolve(__dirname, '..', '..');

/** Starts `harness worker` as its own process and resolves once it reports ready. */
export function spawnWorker(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  return spawnReady([path.join(ROOT, 'bin', 'harness.js'), 'worker'], { env });
}

/** Starts a Node worker script (`node <args>`) and resolves once it prints `worker ready`. */
export async function spawnReady(args: string[], opts: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<ChildProcess> {
  const child = spawn(process.execPath, args, { env: opts.env, ...(opts.cwd ? { cwd: opts.cwd } : {}), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      if (output.includes('worker ready')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`worker exited early (${code}): ${output}`)));
  });
  return child;
}

/** Kills a process (and waits for it to be gone). */
export async function kill(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  await Promise.race([gone, sleep(10_000)]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

/** Polls `check` until it is truthy (or fails after `timeoutMs`, naming what it waited for). */
export async function until<T>(what: string, check: () => Promise<T> | T, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
