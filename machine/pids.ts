/**
 * Pid files of the embedded deployment, and whether the process a pid names is still the one
 * we recorded. A pid file outlives its process (kill -9, reboot) and the kernel reuses pids,
 * so a live pid proves nothing: on Linux the process's command line, working directory and
 * environment say whether it is this HARNESS_HOME's Temporal server or worker. Elsewhere
 * (no /proc) a live pid is taken at its word.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { homeOf } from './state-dir';

/** The pid a pid file names, or undefined when there is none or it is not a pid. */
export function readPidFile(file: string): number | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
  const pid = Number(text);
  return /^\d+$/.test(text) && pid > 0 ? pid : undefined;
}

/** Writes a pid file (whole content at once). */
export function writePidFile(file: string, pid: number): void {
  writeFileSync(file, `${pid}\n`);
}

/** Removes a pid file only while it still names `pid` (another process may have replaced it). */
export function removePidFileIf(file: string, pid: number | undefined): void {
  if (pid !== undefined && readPidFile(file) === pid) rmSync(file, { force: true });
}

const HAS_PROC = existsSync('/proc/self/cmdline');

/** True when the pid names a running process; a zombie (exited, not yet reaped) counts as gone. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (!HAS_PROC) return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return false;
  }
}

function commandLine(pid: number): string[] | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw ? raw.replace(/\0$/, '').split('\0') : undefined;
  } catch {
    return undefined;
  }
}

function processCwd(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}

function environment(pid: number): Map<string, string> | undefined {
  try {
    const vars = new Map<string, string>();
    for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
      const eq = entry.indexOf('=');
      if (eq > 0) vars.set(entry.slice(0, eq), entry.slice(eq + 1));
    }
    return vars;
  } catch {
    return undefined;
  }
}

/** The same path as `b`, symlinks resolved where they exist. */
function samePath(a: string, b: string): boolean {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  return path.resolve(a) === path.resolve(b) || real(a) === real(b);
}

/** True when the pid is a `temporal server start-dev` using this HARNESS_HOME's database. */
function isEmbeddedServer(pid: number, home: string): boolean {
  if (!processAlive(pid)) return false;
  if (!HAS_PROC) return true;
  const args = commandLine(pid);
  const cwd = processCwd(pid);
  if (!args || !cwd) return false;
  // The temporal binary (or whatever TEMPORAL_CLI_PATH names) running `server start-dev`.
  const binary = path.basename(args[0] ?? '');
  if (!binary.includes('temporal') && binary !== path.basename(process.env.TEMPORAL_CLI_PATH ?? '')) return false;
  const start = args.indexOf('server');
  if (start < 0 || args[start + 1] !== 'start-dev') return false;
  const db = args.indexOf('--db-filename');
  return db > 0 && db + 1 < args.length && samePath(path.resolve(cwd, args[db + 1]!), path.join(home, 'temporal.db'));
}

/**
 * True when the pid is a node process running the harness CLI's `worker` or `dev` command
 * whose HARNESS_HOME (as that process resolves it) is `home`.
 */
export function isHarnessWorker(pid: number, home: string): boolean {
  if (!processAlive(pid)) return false;
  if (!HAS_PROC) return true;
  const args = commandLine(pid);
  const cwd = processCwd(pid);
  const env = environment(pid);
  if (!args || !cwd || !env) return false;
  // `node …/bin/harness.js worker`, or through the npm bin link `node …/.bin/harness dev`.
  const script = args.findIndex((a, i) => i > 0 && ['harness.js', 'harness'].includes(path.basename(a)));
  if (script < 0 || !['worker', 'dev'].includes(args[script + 1] ?? '') || args.includes('--stop')) return false;
  return samePath(homeOf((name) => env.get(name), cwd), home);
}

/** What a pid file says about its process. */
export type PidFileState =
  | { state: 'none' }
  | { state: 'ours'; pid: number }
  | { state: 'dead'; pid: number }
  /** A live process that is not ours: the pid was reused after ours ended. */
  | { state: 'foreign'; pid: number };

/** Reads a pid file and checks the process it names against what it should be. */
export function checkPidFile(file: string, role: 'server' | 'worker', home: string): PidFileState {
  const pid = readPidFile(file);
  if (pid === undefined) return { state: 'none' };
  if (!processAlive(pid)) return { state: 'dead', pid };
  const ours = role === 'server' ? isEmbeddedServer(pid, home) : isHarnessWorker(pid, home);
  return ours ? { state: 'ours', pid } : { state: 'foreign', pid };
}

/** Every running Temporal server of this HARNESS_HOME, whatever the pid files say (Linux only). */
export function findEmbeddedServers(home: string): number[] {
  if (!HAS_PROC) return [];
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => pid !== process.pid && isEmbeddedServer(pid, home));
}
