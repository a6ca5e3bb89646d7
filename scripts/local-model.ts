/**
 * A real local model for tests and benches: llama.cpp's llama-server (built by
 * scripts/setup-local-model.sh) serving SmolLM2-135M-Instruct on a free loopback port, stopped by
 * its caller. Missing binaries are a failure, never a skip: CI runs the tests for real.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createServer } from 'node:net';
import { projectRoot } from '../machine/paths';

const ROOT = projectRoot();
/** The server binary (a link into the build cache) and the model, as setup leaves them. */
export const LLAMA_SERVER = process.env.HARNESS_LLAMA_SERVER ?? path.join(ROOT, '.venv', 'bin', 'llama-server');
export const SMOLLM2_GGUF = process.env.HARNESS_LOCAL_GGUF ?? path.join(ROOT, '.venv', 'share', 'harness', 'smollm2-135m-instruct.gguf');
/** The name the server answers to (any name works; this one reads well in reports). */
export const LOCAL_MODEL = 'smollm2';

/** A running server. */
export interface LocalModel {
  /** Base URL for an OpenAI-compatible client. */
  url: string;
  /** The server's log so far (for a failing test's message). */
  log(): string;
  close(): Promise<void>;
}

/**
 * Starts llama-server; `temp` 0 makes replies greedy (a test that needs a repeatable path),
 * the default samples as users run it (an eval's trials differ). `parallel`: slots served at once;
 * `context`: tokens of context over all slots (default 4,096 a slot); `threads`: default 2.
 */
export async function startLocalModel(opts: { temp?: number; parallel?: number; threads?: number; context?: number } = {}): Promise<LocalModel> {
  for (const [what, file] of [
    ['llama-server', LLAMA_SERVER],
    ['the SmolLM2 model', SMOLLM2_GGUF],
  ] as const) {
    if (!existsSync(file)) throw new Error(`${what} is missing at ${file}: run bash scripts/setup-local-model.sh (npm run setup does)`);
  }
  const port = await freePort();
  const logFile = path.join(os.tmpdir(), `llama-server-${port}.log`);
  const parallel = opts.parallel ?? 2;
  const args = ['-m', SMOLLM2_GGUF, '--host', '127.0.0.1', '--port', String(port), '-a', LOCAL_MODEL, '-t', String(opts.threads ?? 2), '-np', String(parallel), '-c', String(opts.context ?? 4096 * parallel)];
  if (opts.temp !== undefined) args.push('--temp', String(opts.temp), '--seed', '1');
  const out = openSync(logFile, 'w');
  const proc: ChildProcess = spawn(LLAMA_SERVER, args, { stdio: ['ignore', out, out] });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-4000) : '');
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    proc.kill('SIGTERM');
    if (!(await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)]))) proc.kill('SIGKILL');
  };
  // Loading takes seconds; a crash (a binary built for instructions this CPU lacks) ends it early.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const gone = await Promise.race([exited.then((code) => `exited with ${code}`), sleep(250).then(() => undefined)]);
    if (gone) throw new Error(`llama-server ${gone}:\n${log()}`);
    const ok = await fetch(`${url}/health`).then((r) => r.ok, () => false);
    if (ok) return { url: `${url}/v1`, log, close };
    if (Date.now() > deadline) {
      await close();
      throw new Error(`llama-server did not become healthy in 120 s:\n${log()}`);
    }
  }
}

/** A loopback port nobody listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
