/**
 * Stdio MCP servers a killed worker leaves behind. A server's process outlives a worker that
 * was SIGKILLed (many servers do not exit when their stdin closes), so each worker notes the
 * servers it started in HARNESS_HOME, and every worker stops those of workers that are gone,
 * when it starts and then at each of its sweeps (workers/upkeep.ts). A pid is signalled only
 * while its command line is still the one noted, so a reused pid is never hit.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { processAlive } from '../../machine/pids';

interface Note {
  worker: number;
  pid: number;
  cmdline: string;
}

/** The server processes this process noted (and has not forgotten). */
const notedHere = new Set<number>();

/** Where a worker notes the server processes it started. */
export function serverNotesDir(home: string): string {
  return path.join(home, 'mcp-servers');
}

/** Notes a server process this worker started. */
export function noteServer(dir: string, pid: number): void {
  const cmdline = readCmdline(pid);
  if (cmdline === undefined) return; // already gone
  mkdirSync(dir, { recursive: true });
  notedHere.add(pid);
  writeFileSync(path.join(dir, `${pid}.json`), JSON.stringify({ worker: process.pid, pid, cmdline } satisfies Note));
}

/** Forgets a server process that exited or was closed. */
export function forgetServer(dir: string, pid: number): void {
  notedHere.delete(pid);
  rmSync(path.join(dir, `${pid}.json`), { force: true });
}

/**
 * Stops the noted servers of workers that no longer run; returns their pids. A note with this
 * process's pid is ours only if this process noted that server (else a predecessor's that had
 * our pid, as a worker restarted in a fresh container often does).
 */
export function sweepOrphanServers(dir: string): number[] {
  const stopped: number[] = [];
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => /^\d+\.json$/.test(f));
  } catch {
    return stopped;
  }
  for (const file of files) {
    let note: Note;
    try {
      note = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as Note;
    } catch {
      rmSync(path.join(dir, file), { force: true });
      continue;
    }
    if (note.worker === process.pid ? notedHere.has(note.pid) : processAlive(note.worker)) continue; // its worker still runs
    if (readCmdline(note.pid) === note.cmdline) {
      try {
        process.kill(note.pid, 'SIGKILL');
        stopped.push(note.pid);
      } catch {
        // gone meanwhile
      }
    }
    rmSync(path.join(dir, file), { force: true });
  }
  return stopped;
}

function readCmdline(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
}
