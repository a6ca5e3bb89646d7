/** `harness worker`: runs a worker against TEMPORAL_ADDRESS (or the embedded dev server). */
import { rmSync } from 'node:fs';
import { openHome } from '../host/home';
import { removePidFileIf, writePidFile } from '../host/pids';
import { connectClient, temporalSettings, type TemporalSettings } from '../client/temporal';
import { connectPatiently } from './connect';
import type { SandboxPool } from '../activities/sandbox/pool';
import { defaultSandboxes, defaultSkills } from '../activities/worker-defaults';
import { DEFAULT_SANDBOX_IMAGE, sandboxProblems } from '../activities/sandbox/docker-sandbox';
import { MemoryHost } from '../activities/memory/host';
import { McpPool } from '../activities/mcp/pool';
import { serverNotesDir, sweepOrphanServers } from '../activities/mcp/orphans';
import { createHarnessWorker, untilRunning } from './worker';
import { openStore } from './open-store';
import { installEscapingRuntime } from '../host/terminal/temporal-log';
import { writeErrLine } from '../host/terminal/write';
import { UsageError } from '../host/errors';
import { describeTuning, workerTuning } from './tuning';
import { hostIdProblem } from '../common/host';
import { InFlightActivities, runDraining } from './drain';
import { workerDeclarations } from './declarations';

/**
 * Runs until SIGINT/SIGTERM, then drains (workers/drain.ts): stops polling, lets activities in
 * flight finish within HARNESS_DRAIN_GRACE_SEC, leaves the session containers for the next
 * worker, and only then closes MCP servers, the store and the connection. Writes pid/ready files
 * when asked to (background workers).
 */
export async function runWorker(env: NodeJS.ProcessEnv = process.env, log: (line: string) => void = writeErrLine): Promise<void> {
  // Before anything starts: a bad value is a usage error (exit 2) naming its variable.
  const tuned = workerTuning(env);
  if (tuned.problems.length) throw new UsageError(tuned.problems.join('; '), 'fix or unset it (docs/worker-tuning.md lists each setting and its default)');
  const badHost = hostIdProblem(env.HARNESS_HOST_ID);
  if (badHost) throw new UsageError(badHost, 'a host id is letters, digits, dots, dashes and underscores (the node or machine name)');
  // Before the first connection: the SDK's log lines quote activity errors (model and tool text).
  installEscapingRuntime();
  const s = temporalSettings(env);
  // Nothing under the home is read before it is checked to be this user's (host/home-mark.ts).
  const { home, notices } = openHome(env);
  for (const notice of notices) log(notice);
  // What sessions may name (MCP servers, endpoints, skills folders): from this worker's own config.
  const declarations = workerDeclarations(env, process.cwd(), {}, log);
  log(`declared: ${declarations.describe()}`);
  const connection = await connectPatiently(s, log);
  const skills = defaultSkills(env);
  for (const problem of skills.catalog().problems) log(`skills: ${problem}`);
  const sandboxes = defaultSandboxes(home, env, skills);
  await checkSandboxes(sandboxes, s, env, log);
  // The message store before polling; the embedded one may be waited for (workers/open-store.ts).
  const memory = MemoryHost.fromEnv(home, env);
  const giveUp = async () => {
    await memory.close();
    await connection.close();
  };
  const opened = await openStore(memory, env, log).catch(async (err: unknown) => {
    await giveUp();
    throw err;
  });
  if (opened === 'stopped') return giveUp();
  // MCP server processes and connections live as long as the worker, shared by its sessions.
  // Servers a killed worker left running are stopped first; this worker notes the ones it starts.
  const notesDir = serverNotesDir(home);
  const orphans = sweepOrphanServers(notesDir);
  if (orphans.length) log(`mcp: stopped ${orphans.length} server process(es) left by a worker that is gone: ${orphans.join(', ')}`);
  const mcp = new McpPool({ env, log: (line) => log(`mcp: ${line}`), notesDir });
  // Model replies stream to the live views of `run`, `chat` and `status --follow` (HARNESS_STREAM=0: not).
  const streamText = env.HARNESS_STREAM !== '0';
  const inFlight = new InFlightActivities();
  const hostId = env.HARNESS_HOST_ID;
  const worker = await createHarnessWorker({ connection, namespace: s.namespace, taskQueue: s.taskQueue, home, env, sandboxes, skills, memory, mcp, streamText, tuning: tuned.tuning, inFlight, declarations, ...(hostId ? { hostId } : {}) });
  if (env.HARNESS_WORKER_PIDFILE) writePidFile(env.HARNESS_WORKER_PIDFILE, process.pid);
  // The SDK shuts down on SIGINT/SIGTERM: polling stops, calls in flight get the drain grace.
  const running = worker.run();
  try {
    // Ready means polling: a client that started us looks for a polling worker next.
    await untilRunning(worker, running);
    if (env.HARNESS_WORKER_READYFILE) writePidFile(env.HARNESS_WORKER_READYFILE, process.pid);
    const tuning = describeTuning(tuned.tuning);
    const hosting = worker.host ? ` sandbox host=${hostId} (also polls ${worker.host.options.taskQueue})` : '';
    log(`worker ready: ${s.address} namespace=${s.namespace} task queue=${s.taskQueue} home=${home}${hosting}${tuning ? ` (${tuning})` : ''}`);
    // Resolves once the drain is over; only then is anything the activities use closed.
    await runDraining(worker, running, { inFlight, graceMs: tuned.tuning.drainGraceMs, taskQueue: s.taskQueue, log });
  } finally {
    // After the drain: nothing in flight uses them any more (a call the drain gave up on aside).
    await mcp.closeAll();
    await connection.close().catch(() => undefined); // still referenced by a worker whose drain was cut short
    await memory.close();
    if (env.HARNESS_WORKER_READYFILE) rmSync(env.HARNESS_WORKER_READYFILE, { force: true });
    // Only while it still names us: a worker started after us may have taken the file over.
    if (env.HARNESS_WORKER_PIDFILE) removePidFileIf(env.HARNESS_WORKER_PIDFILE, process.pid);
  }
}


/**
 * Says at start what would make run_shell fail (Docker down, image missing) — the worker
 * still runs and those calls return SANDBOX_UNAVAILABLE — and removes containers of
 * sessions that are no longer running.
 */
async function checkSandboxes(pool: SandboxPool, s: TemporalSettings, env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<void> {
  const problems = await sandboxProblems(pool.docker, env.HARNESS_SANDBOX_IMAGE || DEFAULT_SANDBOX_IMAGE);
  for (const p of problems) log(`sandbox: ${p} (run_shell will return SANDBOX_UNAVAILABLE)`);
  if (problems.length) return;
  const client = await connectClient(s, 5_000, undefined, { say: log });
  try {
    const removed = await pool.removeOrphans(async (id) => {
      try {
        return (await client.workflow.getHandle(id).describe()).status.name === 'RUNNING';
      } catch {
        return false;
      }
    });
    if (removed.length) log(`sandbox: removed ${removed.length} container(s) of ended sessions: ${removed.join(', ')}`);
  } finally {
    await client.connection.close();
  }
}
