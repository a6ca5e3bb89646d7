/**
 * The embedded deployment of one CLI test, found through /proc rather than through the pid
 * files under test (which may be wrong): the Temporal server is the process whose command
 * line names the test's database file, a worker is a node process running `harness.js
 * worker|dev` with the test's HARNESS_HOME. Also an isolated environment on free ports and a
 * cleanup that kills whatever is left, so a failing test leaks nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../scripts/free-port';
import { cliEnv, processAlive, waitGone } from './cli';
import { embeddedFiles } from '../../client/embedded';
import { devServerArgs, waitForServer } from '../../client/dev-server';
import { findTemporalCli } from '../../client/temporal-cli';
import { adoptHome } from '../../machine/home-mark';
import type { TemporalSettings } from '../../client/temporal-settings';

/** The `\0`-separated command line of a pid, or undefined when it is gone or unreadable. */
function cmdline(pid: number): string[] | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    return raw ? raw.split('\0').filter((a) => a !== '') : undefined;
  } catch {
    return undefined;
  }
}

/** One variable of a pid's initial environment. */
function environ(pid: number, name: string): string | undefined {
  try {
    const entry = readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .find((e) => e.startsWith(`${name}=`));
    return entry?.slice(name.length + 1);
  } catch {
    return undefined;
  }
}

function livePids(): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => pid !== process.pid && processAlive(pid));
}

/** Live Temporal servers whose command line names `dbFile` (one test's embedded server). */
export function serverPids(dbFile: string): number[] {
  return livePids().filter((pid) => {
    const args = cmdline(pid);
    return !!args && args.includes('start-dev') && args.includes(dbFile);
  });
}

/** Live `harness worker` / `harness dev` processes whose HARNESS_HOME is `home`. */
export function workerPids(home: string): number[] {
  return livePids().filter((pid) => {
    const args = cmdline(pid);
    if (!args || !args.some((a) => path.basename(a) === 'harness.js')) return false;
    if (!args.includes('worker') && !args.includes('dev')) return false;
    return environ(pid, 'HARNESS_HOME') === home;
  });
}

/** SIGKILLs every pid still alive and waits until they are gone. */
export async function killPids(pids: Iterable<number>): Promise<void> {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const pid of pids) await waitGone(pid, 5_000);
}

/** Kills the embedded server and workers of `home` that are still running (afterAll). */
export async function killDeployment(home: string): Promise<void> {
  // Twice: a worker killed mid-start may have spawned nothing yet, a server may appear late.
  for (let i = 0; i < 2; i++) {
    await killPids([...serverPids(path.join(home, 'temporal.db')), ...workerPids(home)]);
    await sleep(200);
  }
}

/** A CLI environment with its own HARNESS_HOME and free ports for the embedded server and its UI. */
export async function isolatedEmbeddedEnv(home: string, extra: Record<string, string> = {}): Promise<NodeJS.ProcessEnv> {
  const port = await freePort();
  let uiPort = await freePort();
  // The UI port and the two above it (HTTP API, metrics) clear of the gRPC port.
  while (Math.abs(uiPort - port) <= 2) uiPort = await freePort();
  adoptHome(home); // the test's own folder (some put pid files in it first): marked as this user's
  return cliEnv({ HARNESS_HOME: home, HARNESS_EMBEDDED_PORT: String(port), HARNESS_UI_PORT: String(uiPort), ...extra });
}

/**
 * A headless dev server of a test's own on `settings`' ports with `home`'s database (so a
 * restart on the same two has the sessions), once it answers; `started` hears the process at
 * once, so the test can kill it even when it never answers.
 */
export async function startOwnServer(settings: TemporalSettings, home: string, started?: (child: ChildProcess) => void): Promise<ChildProcess> {
  adoptHome(home); // the test's own folder, which the CLI and workers it starts then use
  const child = spawn(findTemporalCli(), devServerArgs(settings, home), { stdio: 'ignore' });
  started?.(child);
  await waitForServer(settings, embeddedFiles(home).serverLog, 90_000);
  return child;
}
