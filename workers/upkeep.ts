/**
 * A worker's housekeeping, at start and then every HARNESS_SANDBOX_SWEEP_SEC while it runs:
 *
 * - sandboxes of sessions whose workflows ended (containers, exec records) are removed, asking
 *   Temporal about each owner first (workers/sandbox-owners.ts); when it cannot answer, nothing is;
 * - sandboxes no call used for HARNESS_SANDBOX_IDLE_SEC are stopped (their next command starts
 *   them again, every workspace file kept);
 * - MCP server processes noted by workers that are gone are stopped.
 *
 * No sweep touches what a call of any worker on this home uses (activities/sandbox/use.ts).
 * docs/worker-tuning.md lists the settings.
 */
import type { SandboxPool } from '../activities/sandbox/pool';
import { SandboxError } from '../activities/sandbox/docker-errors';
import { sweepOrphanServers } from '../activities/mcp/orphans';

/** How often the sweeps run, and after how long without a call a sandbox is stopped. */
interface UpkeepSettings {
  /** 0: only at start. */
  sweepMs: number;
  /** 0: never stopped for idleness. */
  idleMs: number;
}

const DEFAULT_UPKEEP: Readonly<UpkeepSettings> = Object.freeze({ sweepMs: 5 * 60_000, idleMs: 30 * 60_000 });

const UPKEEP_VARIABLES = { sweepMs: 'HARNESS_SANDBOX_SWEEP_SEC', idleMs: 'HARNESS_SANDBOX_IDLE_SEC' } as const satisfies Record<keyof UpkeepSettings, string>;

const MAX_SEC = 7 * 24 * 3_600;

/** The settings from the environment; a bad value is a problem naming its variable (and keeps the default). */
export function upkeepSettings(env: NodeJS.ProcessEnv): { settings: UpkeepSettings; problems: string[] } {
  const settings = { ...DEFAULT_UPKEEP };
  const problems: string[] = [];
  for (const key of ['sweepMs', 'idleMs'] as const) {
    const v = env[UPKEEP_VARIABLES[key]]?.trim();
    if (!v) continue;
    if (!/^\d+(\.\d+)?$/.test(v) || Number(v) > MAX_SEC) problems.push(`${UPKEEP_VARIABLES[key]} is ${JSON.stringify(v)}: give seconds, a number from 0 (${key === 'sweepMs' ? 'only at start' : 'never'}) to ${MAX_SEC}`);
    else settings[key] = Math.round(Number(v) * 1000);
  }
  return { settings, problems };
}

interface UpkeepOptions {
  pool: SandboxPool;
  /** Whether the workflows owning a sandbox's session run; throws when Temporal cannot tell. */
  owned: (sessionId: string) => Promise<boolean>;
  /** Where this home's workers note their MCP server processes. */
  mcpNotesDir: string;
  settings: UpkeepSettings;
  log: (line: string) => void;
  /** Whether sandboxes can run here (Docker up, image present): the sandbox sweeps are skipped otherwise. */
  sandboxes?: boolean;
}

/** The sweeps of one worker process. */
export class WorkerUpkeep {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  // A trouble is said when it begins or changes, not every sweep.
  private lastTrouble = '';

  constructor(private readonly o: UpkeepOptions) {}

  /** One round of every sweep; never throws (what went wrong is logged). */
  sweep(atStart = false): Promise<void> {
    this.sweeping ??= this.round(atStart).finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** Sweeps every sweepMs from now on (none when 0). */
  start(): void {
    if (this.timer || this.o.settings.sweepMs <= 0) return;
    this.timer = setInterval(() => void this.sweep(), this.o.settings.sweepMs);
    this.timer.unref();
  }

  /** No more sweeps; resolves once one under way is over. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  private async round(atStart: boolean): Promise<void> {
    const { log } = this.o;
    const servers = sweepOrphanServers(this.o.mcpNotesDir);
    if (servers.length) log(`mcp: stopped ${servers.length} server process(es) left by a worker that is gone: ${servers.join(', ')}`);
    if (this.o.sandboxes === false && atStart) return;
    const troubles: string[] = [];
    try {
      const removed = await this.o.pool.removeOrphans(this.o.owned);
      if (removed.length) log(`sandbox: removed ${removed.length} container(s) of ended sessions: ${removed.join(', ')}`);
    } catch (err) {
      // Docker down, or Temporal unable to say whether an owner runs: nothing was removed.
      troubles.push(err instanceof SandboxError ? `no sandbox swept: ${oneLine(err)}` : `could not tell which sessions have ended, so no sandbox was removed: ${oneLine(err)}`);
    }
    if (this.o.settings.idleMs > 0 && !troubles.some((t) => t.startsWith('no sandbox swept'))) {
      try {
        const stopped = await this.o.pool.stopIdle(this.o.settings.idleMs);
        if (stopped.length) log(`sandbox: stopped ${stopped.length} container(s) unused for ${minutes(this.o.settings.idleMs)}: ${stopped.join(', ')} (each starts again on its next command, its files kept)`);
      } catch (err) {
        troubles.push(`could not stop idle sandboxes: ${oneLine(err)}`);
      }
    }
    const trouble = troubles.join('; ');
    if (trouble && trouble !== this.lastTrouble) log(`sandbox: ${trouble}${this.o.settings.sweepMs > 0 ? `; trying again every ${minutes(this.o.settings.sweepMs)}` : ''}`);
    this.lastTrouble = trouble;
  }
}

function oneLine(err: unknown): string {
  return ((err as Error)?.message ?? String(err)).split('\n')[0]!.slice(0, 300);
}

function minutes(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`;
}
