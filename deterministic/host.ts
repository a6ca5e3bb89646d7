/**
 * Sandbox hosts: where a session's containers, workspace and stateful MCP servers live. A worker
 * started with a host id (HARNESS_HOST_ID) also polls its host's own task queue; a session is
 * pinned to the host whose worker prepared its first turn, and every call that touches the
 * sandbox goes to that queue. A host whose worker has been gone longer than `hostTimeoutMs`
 * loses its sessions to another host: they go on there from the workspace as their turn began.
 */

/** A host: its id and the task queue its worker polls. */
export interface HostRef {
  id: string;
  queue: string;
}

/** Why `id` cannot be a host id (it names a task queue), or undefined when it can (or is unset). */
export function hostIdProblem(id: string | undefined): string | undefined {
  if (id === undefined) return undefined;
  return /^[A-Za-z0-9._-]{1,100}$/.test(id) ? undefined : `HARNESS_HOST_ID "${id.slice(0, 40)}" is not a host id`;
}

/** The task queue of host `hostId` for a worker of `taskQueue`. */
export function hostQueueOf(taskQueue: string, hostId: string): string {
  return `${taskQueue}@host-${hostId}`;
}

/** A move of a session off a lost host, as a turn result records it (`step` 0: before the turn's first step). */
export interface HostMove {
  step: number;
  from: string;
  to?: string;
}

/** How long a call waits for its host's worker to take it before the session moves: longer than a restart. */
export const DEFAULT_HOST_TIMEOUT_MS = 60_000;

/**
 * What the model is told when its session's host was lost: during a call (`restored` says what
 * the turn-start workspace brought back; the call did not run) or, `betweenTurns`, before the turn
 * began (the workspace starts empty).
 */
export function hostLostMessage(lost: HostRef, to: HostRef | undefined, restored: { files: number; problems: string[] } | undefined, waitedMs: number, betweenTurns = false): string {
  const where = to ? `this session moved to host ${to.id}` : 'this session goes on without a host of its own';
  const workspace = restored
    ? `its workspace there is the one this turn started with (${restored.files} file(s) restored${restored.problems.length ? `; not restored: ${restored.problems.slice(0, 3).join('; ')}` : ''})`
    : 'its workspace there starts empty';
  const lostWith = betweenTurns ? 'the files of earlier turns and anything installed or started in its sandbox' : 'changes to files since this turn began, anything installed or started in its sandbox, and this call, which did not run';
  return `the sandbox host ${lost.id} did not answer for ${Math.round(waitedMs / 1000)} s and is taken as lost: ${where}, and ${workspace}. Lost with the old host: ${lostWith}.`;
}
