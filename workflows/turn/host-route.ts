/**
 * Where a turn's sandbox calls go: to its session's sandbox host when it has one (sandbox-host.ts:
 * a call whose host's worker is gone fails after `hostTimeoutMs` instead of waiting for it
 * forever). Such a loss moves the session: the next worker that answers on the shared queue
 * claims it, restores the workspace as this turn began, and the model reads what was lost.
 * Sessions of workers without a host id have no host: their calls take the paths they always took.
 */
import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import { DEFAULT_HOST_TIMEOUT_MS, hostLostMessage, type HostMove, type HostRef } from '../../deterministic/host';
import type { PrepareTurnInput, PrepareTurnResult } from '../../deterministic/activity-types';
import type { TurnInput } from '../../deterministic/session';
import type { WorkspaceSnapshot } from '../../deterministic/snapshot';
import { STORE_ACTIVITY, type Activities } from '../activity-options';
import { onSandboxHost, type OnHost } from '../sandbox-host';
import type { RunEvents } from './run-events';

// Claiming a host is a store read and a workspace restore on whichever worker takes it.
const { claimHost } = proxyActivities<Activities>(STORE_ACTIVITY);

function hostTimeout(input: TurnInput): number {
  return input.config.limits.hostTimeoutMs ?? DEFAULT_HOST_TIMEOUT_MS;
}

/** The last move of a session off a lost host: what the model reads of it, and whether it is still under way. */
interface HostLeft {
  from: string;
  pending: boolean;
  message: Promise<string>;
}

/** The host a turn's sandbox calls go to, and how it moves when that host is lost. */
export class HostRoute {
  readonly moves: HostMove[] = [];
  private readonly proxies = new Map<string, Activities['executeTool']>();

  private constructor(
    private host: HostRef | undefined,
    private readonly timeoutMs: number,
    private readonly sessionId: string,
    private readonly events: RunEvents,
    private snapshot: WorkspaceSnapshot | undefined,
  ) {}

  /**
   * Prepares the turn where the session lives: on its host, or (a new session, or its host lost
   * since its last turn) on the shared queue, whose worker then hosts it. Returns the route and
   * what prepareTurn found, with a note for the model when the host was lost.
   */
  static async prepare(input: TurnInput, request: PrepareTurnInput, events: RunEvents, prepare: (req: PrepareTurnInput) => Promise<PrepareTurnResult>): Promise<{ route: HostRoute; prepared: PrepareTurnResult; note?: string }> {
    const timeoutMs = hostTimeout(input);
    return onSandboxHost(
      input.host,
      timeoutMs,
      async (onHost) => {
        const prepared = onHost ? await proxyActivities<Activities>({ ...STORE_ACTIVITY, ...onHost }).prepareTurn(request) : await prepare(request);
        return { route: new HostRoute(prepared.host ?? input.host, timeoutMs, input.sessionId, events, prepared.workspace), prepared };
      },
      // Lost since the session's last turn: another worker hosts it, its workspace starts empty.
      async (lost) => {
        events.add('activity');
        const prepared = await prepare(request);
        const route = new HostRoute(prepared.host, timeoutMs, input.sessionId, events, prepared.workspace);
        route.moves.push({ step: 0, from: lost.id, ...(prepared.host ? { to: prepared.host.id } : {}) });
        const note = `[The harness: ${hostLostMessage(lost, prepared.host, undefined, timeoutMs, true)}]`;
        return { route, prepared, note };
      },
    );
  }

  /** The route of a long turn's later run: where the run before it left the session. */
  static resumed(input: TurnInput, events: RunEvents): HostRoute {
    return new HostRoute(input.resume?.host, hostTimeout(input), input.sessionId, events, input.resume?.workspace);
  }

  /** The session's host now (the turn result carries it to the session). */
  get current(): HostRef | undefined {
    return this.host;
  }

  /** What the next run of a long turn needs to go on where this one is. */
  resume(): { host?: HostRef; workspace?: WorkspaceSnapshot } {
    return { ...(this.host ? { host: this.host } : {}), ...(this.snapshot ? { workspace: this.snapshot } : {}) };
  }

  /** executeTool on the host's queue (`onHost`, from onSandboxHost) with `base`'s bounds. */
  activity(key: string, base: ActivityOptions, onHost: OnHost): Activities['executeTool'] {
    const id = `${onHost.taskQueue}|${key}`;
    let fn = this.proxies.get(id);
    if (!fn) {
      fn = proxyActivities<Activities>({ ...base, ...onHost }).executeTool;
      this.proxies.set(id, fn);
    }
    return fn;
  }

  /** Runs `run` on the session's host, or without one where calls always ran; `lost` when that host is lost (onSandboxHost). */
  run<T>(run: (onHost?: OnHost) => Promise<T>, lost: (host: HostRef) => Promise<T>): Promise<T> {
    return onSandboxHost(this.host, this.timeoutMs, run, lost);
  }

  /**
   * Moves the session off its lost host (at `step`) and says to the model what that cost. Calls
   * that ran together and found the same host lost share one move: the first claims the session,
   * the others read what it said (a second claim would move the session again).
   */
  move(step: number, lost: HostRef = this.host!): Promise<string> {
    const last = this.lastMove;
    if (last?.from === lost.id && (last.pending || this.host?.id !== lost.id)) return last.message;
    const move: HostLeft = { from: lost.id, pending: true, message: Promise.resolve('') };
    move.message = this.claim(step, lost, move);
    this.lastMove = move;
    return move.message;
  }

  private lastMove: HostLeft | undefined;

  private async claim(step: number, lost: HostRef, move: HostLeft): Promise<string> {
    try {
      this.events.add('activity');
      const claimed = await claimHost({ sessionId: this.sessionId, lost, ...(this.snapshot ? { snapshot: this.snapshot } : {}) });
      this.host = claimed.host;
      this.moves.push({ step, from: lost.id, ...(claimed.host ? { to: claimed.host.id } : {}) });
      return hostLostMessage(lost, claimed.host, claimed.restored, this.timeoutMs);
    } finally {
      move.pending = false;
    }
  }
}
