/**
 * One harness worker process, assembled once for `harness worker` (workers/main.ts) and
 * createHarnessWorker (api/worker.ts): the home, the worker's declarations, the connection, the
 * skills, sandboxes, message store, MCP and scripted-model hosts, the Workers (workers/worker.ts),
 * its sweeps (workers/upkeep.ts) and its drain (workers/drain.ts). The two front ends only check
 * their own options and say what they do around it (pid files, errors in their own words).
 */
import type { NativeConnection } from '@temporalio/worker';
import type { HarnessTool } from '../deterministic/custom-tools';
import { hostIdProblem, hostQueueOf } from '../deterministic/host';
import { defaultSandboxes, defaultSkills } from '../activities/worker-defaults';
import { DEFAULT_SANDBOX_IMAGE } from '../activities/sandbox/docker-errors';
import { sandboxProblems } from '../activities/sandbox/containers';
import { createCustomTools } from '../activities/custom-tools/executor';
import { McpPool } from '../activities/mcp/pool';
import { serverNotesDir } from '../activities/mcp/orphans';
import { Database } from '../activities/memory/database';
import { ScriptedModels } from '../activities/scripted-models';
import { UsageError } from '../machine/errors';
import { openHome } from '../machine/home';
import { temporalSettings, type TemporalSettings } from '../client/temporal-settings';
import { installEscapingRuntime } from '../machine/terminal/temporal-log';
import { openStore } from './open-store';
import { createHarnessWorker, untilRunning, type HarnessWorkers } from './worker';
import { describeTuning, type WorkerTuning } from './tuning';
import { InFlightActivities, runDraining } from './drain';
import { workerDeclarations, type DeclarationOptions } from './declarations';
import { checkAgentTools, withAgentTools } from '../config/agents';
import { sandboxOwners } from './sandbox-owners';
import { upkeepSettings, WorkerUpkeep } from './upkeep';
import { mcpIdleSetting } from '../activities/mcp/idle-setting';

/** What the front end gives: its environment, checked tuning, how it connects, and the tools of its own. */
interface AssembleOptions {
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Already checked by the front end (each says a bad value in its own words). */
  tuning: WorkerTuning;
  /** The worker's connection (`harness worker` waits for its server; createHarnessWorker does not). */
  connect: (s: TemporalSettings) => Promise<NativeConnection>;
  declared?: DeclarationOptions;
  /** Custom tools; the ready line names them when given. */
  tools?: readonly HarnessTool[];
  secrets?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  streamText?: boolean;
  bundlePath?: string;
  /** Default HARNESS_HOST_ID. */
  hostId?: string;
}

/** An assembled worker, not polling yet. */
interface AssembledWorker {
  readonly settings: TemporalSettings;
  readonly home: string;
  /** The names of its custom tools (its agents' among them). */
  readonly tools: readonly string[];
  /** The names of the agents it serves. */
  readonly agents: readonly string[];
  readonly workers: HarnessWorkers;
  /** Polls until shut down, drains, then closes what it opened; `onReady` runs once it polls. */
  run(onReady?: () => void): Promise<void>;
  shutdown(): void;
}

/**
 * Assembles the worker: nothing polls yet, but the sandboxes and MCP servers that ended sessions
 * and gone workers left are swept. 'stopped' when asked to stop while it waited for the
 * embedded message store (everything it opened is closed then). A bad setting is a UsageError
 * before anything connects.
 */
export async function assembleWorker(o: AssembleOptions): Promise<AssembledWorker | 'stopped'> {
  const { env, log } = o;
  const hostId = o.hostId ?? env.HARNESS_HOST_ID;
  const badHost = hostIdProblem(hostId);
  if (badHost) throw new UsageError(badHost, 'a host id is letters, digits, dots, dashes and underscores (the node or machine name)');
  const upkeep = upkeepSettings(env);
  if (upkeep.problems.length) throw new UsageError(upkeep.problems.join('; '), 'fix or unset it (docs/worker-tuning.md lists each setting and its default)');
  const mcpIdle = mcpIdleSetting(env);
  if (mcpIdle.problem) throw new UsageError(mcpIdle.problem, 'fix or unset it (docs/worker-tuning.md lists each setting and its default)');
  // Before the first connection: the SDK's log lines quote activity errors (model and tool text).
  installEscapingRuntime();
  const s = temporalSettings(env);
  // Nothing under the home is read before it is checked to be this user's (machine/home-mark.ts).
  const { home, notices } = openHome(env);
  for (const notice of notices) log(notice);
  // The agents' tools are the worker's too: a session of an agent is offered only its own.
  const tools = withAgentTools(o.tools ?? [], o.declared?.agents ?? []);
  // Checked now, so a mistake fails here rather than in the first session's first turn.
  createCustomTools({ home, tools, ...(o.secrets ? { secrets: o.secrets } : {}) });
  // What sessions may name (MCP servers, endpoints, skills folders, agents): from this worker's own config.
  const declarations = workerDeclarations(env, process.cwd(), o.declared ?? {}, log);
  checkAgentTools(declarations.agentSpecs(), tools);
  // A session naming no agent gets the worker's own tools only: an agent's tools are its sessions' alone.
  declarations.setDefaultAgent((o.tools ?? []).map((t) => t.name), o.declared?.requireAgent ?? env.HARNESS_REQUIRE_AGENT === '1');
  log(`declared: ${declarations.describe()}`);
  const connection = await o.connect(s);
  const closers: (() => Promise<void>)[] = [() => connection.close().catch(() => undefined)];
  const close = async () => {
    for (const c of closers.reverse()) await c();
  };
  try {
    const skills = defaultSkills(env);
    for (const problem of skills.catalog().problems) log(`skills: ${problem}`);
    const sandboxes = defaultSandboxes(home, env, skills);
    // What would make run_shell fail (Docker down, image missing): said, and the worker runs on.
    const problems = await sandboxProblems(sandboxes.docker, env.HARNESS_SANDBOX_IMAGE || DEFAULT_SANDBOX_IMAGE);
    for (const p of problems) log(`sandbox: ${p} (run_shell will return SANDBOX_UNAVAILABLE)`);
    // The message store before polling: a worker without it would take turns it can only fail.
    const memory = Database.fromEnv(home, env);
    closers.push(() => memory.close());
    if ((await openStore(memory, env, log)) === 'stopped') {
      await close();
      return 'stopped';
    }
    // MCP server processes and connections: one per session (per agent and tenant for a server
    // declared shareable), closed when idle and with the worker; it notes the ones it starts, so a worker after a crash can stop them (activities/mcp/orphans.ts).
    const mcpNotesDir = serverNotesDir(home);
    const mcp = new McpPool({ env, log: (line) => log(`mcp: ${line}`), notesDir: mcpNotesDir, idleMs: mcpIdle.idleMs });
    closers.push(() => mcp.closeAll());
    // The scripted model's server is this worker's too: closed with it, so the process can end.
    const scripted = new ScriptedModels(home);
    closers.push(() => scripted.close());
    const sweeps = new WorkerUpkeep({ pool: sandboxes, owned: sandboxOwners(connection, s.namespace), mcpNotesDir, settings: upkeep.settings, log, sandboxes: problems.length === 0 });
    // Before polling: what ended sessions and gone workers left, never what still runs.
    await sweeps.sweep(true);
    closers.push(() => sweeps.stop());
    const inFlight = new InFlightActivities();
    const workers = await createHarnessWorker({
      connection,
      namespace: s.namespace,
      taskQueue: s.taskQueue,
      home,
      env,
      skills,
      sandboxes,
      memory,
      mcp,
      scripted,
      tools,
      // Model replies stream to the live views of `run`, `chat` and `status --follow` (HARNESS_STREAM=0: not).
      streamText: o.streamText ?? env.HARNESS_STREAM !== '0',
      ...(o.secrets ? { toolSecrets: o.secrets } : {}),
      ...(o.bundlePath ? { bundlePath: o.bundlePath } : {}),
      tuning: o.tuning,
      inFlight,
      declarations,
      ...(hostId ? { hostId } : {}),
    });
    const hostQueue = hostId ? hostQueueOf(s.taskQueue, hostId) : undefined;
    const readyLine = () => {
      const hosting = hostQueue ? ` sandbox host=${hostId} (also polls ${hostQueue})` : '';
      const own = o.tools || tools.length ? ` tools=${tools.map((t) => t.name).join(',') || '(none of its own)'}` : '';
      const tuning = describeTuning(o.tuning);
      return `worker ready: ${s.address} namespace=${s.namespace} task queue=${s.taskQueue} home=${home}${hosting}${own}${tuning ? ` (${tuning})` : ''}`;
    };
    return {
      settings: s,
      home,
      tools: tools.map((t) => t.name),
      agents: declarations.agentNames(),
      workers,
      async run(onReady) {
        const running = workers.run();
        sweeps.start();
        try {
          // Ready means polling: a client that started us looks for a polling worker next.
          if (await untilRunning(workers, running)) {
            onReady?.();
            log(readyLine());
          }
          // Resolves once the drain is over; only then is anything the activities use closed.
          const taskQueue = hostQueue ? `${s.taskQueue} (and sandbox host queue ${hostQueue})` : s.taskQueue;
          await runDraining(workers, running, { inFlight, graceMs: o.tuning.drainGraceMs, taskQueue, log });
        } finally {
          // The sweeps first, then MCP servers, the scripted host, the store and the connection
          // (one a drain cut short still references: its close may fail).
          await close();
        }
      },
      shutdown() {
        workers.shutdown();
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}
