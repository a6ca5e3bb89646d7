/**
 * Runs the built `harness` CLI (bin/harness.js → dist/cli/main.js) as a real process, the way
 * a user does: no TTY, an explicit environment, a timeout, stdout/stderr/exit code captured.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Repository root. */
export const ROOT = path.resolve(__dirname, '..', '..');
/** The `harness` bin. */
export const HARNESS_BIN = path.join(ROOT, 'bin', 'harness.js');

/** Variables from the developer's shell that would change what the CLI does. */
const SCRUBBED = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CERT',
  'TEMPORAL_TLS_KEY',
  'TEMPORAL_TLS_SERVER_NAME',
  'HARNESS_MODEL',
  'HARNESS_POLICY',
  'HARNESS_CONFIG',
  'HARNESS_HOME',
  'HARNESS_TASK_QUEUE',
  'HARNESS_EMBEDDED_PORT',
  'HARNESS_UI_PORT',
  'HARNESS_HTTP_PORT',
  'HARNESS_METRICS_PORT',
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
];

/** process.env without anything harness-related, plus `extra`. */
export function cliEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of SCRUBBED) delete env[k];
  return { ...env, ...extra };
}

const createdDirs: string[] = [];

/** A new empty directory under the OS temp dir (removed by removeTempDirs). */
export function tempDir(prefix = 'harness-cli-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  createdDirs.push(dir);
  return dir;
}

/** Removes every directory tempDir made in this test file; call it from afterAll. */
export function removeTempDirs(): void {
  for (const dir of createdDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** Writes a scripted-model script into `dir` and returns its absolute path. */
export function writeScript(dir: string, script: unknown, name = `script-${Math.random().toString(36).slice(2, 8)}.json`): string {
  const file = path.join(dir, name);
  writeFileSync(file, JSON.stringify(script, null, 2));
  return file;
}

/** What a finished CLI process left behind. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stderr split into non-empty lines. */
  errLines: string[];
}

/** Options of one CLI call. */
export interface CliOptions {
  env: NodeJS.ProcessEnv;
  /** Working directory (default: a fresh temp dir). */
  cwd?: string;
  /** Killed (SIGKILL) after this long; the result then has signal set. Default 180 s: a generous ceiling, so a loaded machine does not kill a slow CLI. */
  timeoutMs?: number;
}

/** Runs `harness ...args` to completion. */
export function runCli(args: string[], opts: CliOptions): Promise<CliResult> {
  const child = spawnCli(args, opts);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 180_000);
  return new Promise((resolve, reject) => {
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, errLines: stderr.split('\n').filter((l) => l.trim() !== '') });
    });
  });
}

/** Starts `harness ...args` (stdin ignored, stdout/stderr piped) without waiting for it. */
export function spawnCli(args: string[], opts: CliOptions): ChildProcess {
  return spawn(process.execPath, [HARNESS_BIN, ...args], {
    cwd: opts.cwd ?? tempDir(),
    env: opts.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Parses stdout as exactly one JSON document (throws with the output when it is not). */
export function parseJson<T = Record<string, unknown>>(r: CliResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`stdout is not one JSON document (exit ${r.code}):\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
  }
}

/** A readable dump of a result, for assertion messages. */
export function describeResult(r: CliResult): string {
  return `exit ${r.code}${r.signal ? ` (signal ${r.signal})` : ''}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

/** True when the pid names a running process (a zombie counts as gone). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** The pid in a pid file, or undefined. */
export function readPid(file: string): number | undefined {
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** Waits until the pid is gone (true) or the time is up (false). */
export async function waitGone(pid: number, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!processAlive(pid)) return true;
    await sleep(100);
  }
  return !processAlive(pid);
}

/** Sends a signal to a child and waits for it to exit (SIGKILL after `timeoutMs`). */
export async function stopChild(child: ChildProcess | undefined, signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 10_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  await Promise.race([gone, sleep(timeoutMs)]);
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGKILL');
    await Promise.race([gone, sleep(5_000)]);
  }
}

/** Lines of stderr that look like a stack trace frame. */
export function stackLines(text: string): string[] {
  return text.split('\n').filter((l) => /^\s+at /.test(l));
}
