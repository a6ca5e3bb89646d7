/**
 * A scripted model in a process of its own (`harness model serve`), for benchmarks that count
 * the CPU of the worker's process: a real model endpoint runs elsewhere, so the model's own work
 * (parsing each request, building its answer) is no part of what the harness costs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A model endpoint in another process: its base URL, and how to stop it. */
export interface ModelProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

// From dist/bench/ (where the compiled bench runs) to the package's bin/.
const HARNESS_BIN = path.resolve(__dirname, '..', '..', 'bin', 'harness.js');

/** Starts `harness model serve` with `script` (every session plays it from its first step). */
export async function startModelProcess(script: unknown): Promise<ModelProcess> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-model-'));
  const file = path.join(dir, 'script.json');
  writeFileSync(file, JSON.stringify(script));
  const child = spawn(process.execPath, [HARNESS_BIN, 'model', 'serve', '--script', file, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const url = await firstLine(child);
    return {
      url,
      pid: child.pid!,
      async stop() {
        child.kill('SIGTERM');
        await exited;
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** The first line the process prints (the base URL), or its words if it ends first. */
function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve(out.slice(0, nl).trim());
    });
    child.once('exit', (code) => reject(new Error(`harness model serve ended (${String(code)}) before printing its URL: ${err.trim()}`)));
  });
}
