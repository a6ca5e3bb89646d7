/**
 * The embedded Temporal dev server as a process: the `temporal server start-dev` arguments
 * (SQLite under HARNESS_HOME, pinned ports, latency tuning), spawning it, and telling whether it
 * answers. Deciding when to start it, under the start lock, is embedded.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { UserError } from '../machine/errors';
import { escapeForTerminal } from '../machine/terminal/escape';
import { embeddedFiles } from '../machine/paths';
import { findTemporalCli } from './temporal-cli';
import { isReachable, tcpProbe } from './temporal';
import { type TemporalSettings } from './temporal-settings';

/**
 * Dev-server settings that matter for latency. The history service reads its transfer and
 * timer queues at most 20 times a second per shard by default, so every workflow step waited
 * for the next 50 ms slot (measured: 51 → 8 ms per activity round trip). WAL journaling with
 * synchronous=normal syncs at checkpoints instead of ~26 times a step: the database stays
 * consistent and survives process crashes and server restarts; an OS crash or power loss can
 * lose the last few commits (use a cluster with Postgres where that matters).
 */
export const DEV_SERVER_TUNING = [
  '--dynamic-config-value',
  'history.transferProcessorMaxPollRPS=1000',
  '--dynamic-config-value',
  'history.timerProcessorMaxPollRPS=1000',
  '--sqlite-pragma',
  'journal_mode=wal',
  '--sqlite-pragma',
  'synchronous=normal',
];

/**
 * Shuts browsers out of the dev server's HTTP API. `temporal server start-dev` always serves it,
 * beside gRPC on the same address (no flag turns it off), and it answers any Host header (DNS
 * rebinding reads every session) and cross-origin `text/plain` POSTs, which need no CORS
 * preflight (a page of any site starts a session naming any MCP command). Its only gate is
 * `frontend.httpAllowedHosts`, matched against the Host header: a name with a space is no valid
 * Host (the server answers 400 to one) and no request has none that matches, so every call is
 * refused with 403. Nothing of the harness uses the HTTP API (its clients, the worker and the
 * Web UI speak gRPC, which a browser cannot: it needs HTTP/2 without TLS).
 */
const HTTP_API_CLOSED = ['--dynamic-config-value', 'frontend.httpAllowedHosts=["no HTTP API: the harness speaks gRPC"]'];

/**
 * Arguments of `temporal server start-dev` for the embedded server. No Web UI unless `ui`: it
 * answers any Host header and cannot be told otherwise, so while it runs a page whose name
 * resolves to 127.0.0.1 reads (and through its CSRF cookie, which such a page can read, starts)
 * every session; `harness dev --ui` opens it for someone who wants it.
 */
export function devServerArgs(s: TemporalSettings, home: string, opts: { ui?: boolean } = {}): string[] {
  return [
    'server',
    'start-dev',
    '--db-filename',
    embeddedFiles(home).db,
    '--ip',
    '127.0.0.1',
    '--port',
    String(s.embeddedPort),
    '--namespace',
    s.namespace,
    '--log-level',
    'warn',
    ...DEV_SERVER_TUNING,
    ...HTTP_API_CLOSED,
    // Pinned rather than random, so the worker knows to keep http_request away from them even
    // where it cannot list the server's ports (no /proc; see activities/tools/own-ports.ts).
    '--http-port',
    String(s.httpPort),
    '--metrics-port',
    String(s.metricsPort),
    ...(opts.ui ? ['--ui-port', String(s.uiPort)] : ['--headless']),
  ];
}

/**
 * Starts the dev server; detached ones outlive this process. It logs to the home's server log
 * when detached or asked to (scripts and benchmarks, whose output is their figures), else to
 * this process's output (`harness dev` in the foreground). The caller records its pid once it is up.
 */
export function spawnDevServer(s: TemporalSettings, home: string, opts: { detached: boolean; ui?: boolean; logToFile?: boolean }): ChildProcess {
  const files = embeddedFiles(home);
  mkdirSync(path.dirname(files.serverLog), { recursive: true });
  const out = opts.detached || opts.logToFile ? openSync(files.serverLog, 'a') : 'inherit';
  const child = spawn(findTemporalCli(), devServerArgs(s, home, opts), {
    detached: opts.detached,
    stdio: ['ignore', out, out],
  });
  // The child has its own copy of the log's descriptor.
  if (typeof out === 'number') closeSync(out);
  if (opts.detached) child.unref();
  return child;
}

/** True once the child process has exited or was killed by a signal. */
export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/**
 * Waits until the frontend answers, or fails naming the log; fails at once when `child` (the
 * server being waited for) exits. Patient with a loaded machine: "nothing listens yet" is
 * cheap to ask again, and a listening server gets seconds to answer.
 */
export async function waitForServer(s: TemporalSettings, logFile: string, timeoutMs = 60_000, child?: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  // The log is appended to across starts: only what this start wrote tells why it ended.
  const logFrom = sizeOf(logFile);
  while (Date.now() < deadline) {
    if (child && exited(child)) {
      const why = exitReason(logFile, logFrom);
      throw new UserError(`the embedded Temporal server exited (${child.exitCode ?? child.signalCode}) before answering on ${s.address}${why ? `: ${why}` : ''}`, `see ${logFile}`);
    }
    if ((await tcpProbe(s.address, 2_000)) !== 'refused' && (await isReachable(s, 3_000))) return;
    await sleep(250);
  }
  throw new UserError(`the embedded Temporal server did not come up on ${s.address} within ${timeoutMs / 1000}s`, `see ${logFile}`);
}

/**
 * Whether the embedded server answers: `down` when nothing listens on its port, `busy` when
 * something listens but no Temporal frontend answered in a few tries (starting, overloaded,
 * or not Temporal at all).
 */
export async function probeServer(s: TemporalSettings): Promise<'up' | 'down' | 'busy'> {
  if ((await tcpProbe(s.address, 5_000)) === 'refused') return 'down';
  for (let i = 0; i < 3; i++) {
    if (await isReachable(s, 5_000)) return 'up';
    await sleep(250);
  }
  return 'busy';
}

/**
 * The last error line of a server log (a port taken, a database locked), shortened: what the
 * user needs in the one-line error instead of opening the log. Undefined for no log or no error.
 */
export function exitReason(logFile: string, from = 0): string | undefined {
  let text: string;
  try {
    text = readFileSync(logFile).subarray(from).toString('utf8').slice(-16_384);
  } catch {
    return undefined;
  }
  const lines = text.split('\n').filter((l) => /error|fatal|panic|address already in use|locked/i.test(l));
  const last = lines.at(-1) && escapeForTerminal(lines.at(-1)!.trim());
  if (!last) return undefined;
  return last.length > 300 ? `${last.slice(0, 297)}...` : last;
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}
