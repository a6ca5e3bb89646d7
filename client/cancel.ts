/**
 * Cancelling a turn or a whole session (`harness cancel`, HarnessClient.cancel).
 *
 * A turn is cancelled as a workflow: it stops at what it waits on (a model call is aborted, a
 * run_shell command is killed in the sandbox, an http_request is aborted, a wait on a person
 * ends) and ends `cancelled`, keeping its work; its session takes the next message. A session
 * is ended first, so it takes no further message, and then its current turn is cancelled; it
 * closes the way `harness end` closes it, removing its sandbox.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { endSessionUpdate, stateQuery } from '../deterministic/messages';
import type { TurnResult } from '../deterministic/session';
import type { SessionState } from '../deterministic/session-state';
import { rootCauseMessage } from '../deterministic/errors';
import { UsageError, UserError } from '../machine/errors';
import { parseAgentTurnId, parseAnyTurnId, sessionOfTurnId, turnNumberOf } from '../deterministic/turn-id';
import { NO_WORKER_HINT } from './require-worker';
import { describeTrialTurn, notASession } from './trial-ids';
import { addressOf, noWorker } from './wait-progress';
import { workerPresence } from './worker-presence';

/** What a cancellation did. */
export interface Cancelled {
  /** What was named: one turn, or a session. */
  kind: 'turn' | 'session';
  sessionId: string;
  /** The turn that was running (and was cancelled); absent for a session that was idle. */
  turnId?: string;
  /** How that turn ended: `cancelled`, or how it ended when it finished before the cancellation reached it. */
  terminatedBy?: string;
  /** With `wait: false`: the cancellation was asked for, not waited on. */
  requested?: true;
}

/** How long a cancellation is waited on. */
export interface CancelOptions {
  /** Give up waiting after this long (default 120 s); the cancellation still takes effect once a worker runs the turn. */
  timeoutMs?: number;
  /** false: return once the cancellation is delivered, without waiting for the turn to stop. */
  wait?: boolean;
}

const DEFAULT_TIMEOUT_MS = 120_000;
// How often the turn and the session are looked at while the cancellation takes effect.
const LOOK_EVERY_MS = 250;
// A turn still running after this long: is anyone there to run its cancellation?
const WORKER_CHECK_AFTER_MS = 5_000;

/** Cancels the turn `<session>/turn-N` or a sub-agent's (`<turn>/agent-<call>`: its parent goes on), or the session `<session>` (its current turn, then the session). */
export async function cancel(client: Client, id: string, opts: CancelOptions = {}): Promise<Cancelled> {
  if (typeof id !== 'string' || id.trim() === '') throw new UsageError("name what to cancel: a turn (<session>/turn-N, or a sub-agent's <session>/turn-N/agent-<call id>) or a session", 'see running sessions with `harness sessions`');
  const deadline = Date.now() + (opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const t = parseAnyTurnId(id, { strict: true });
  return t ? cancelTurn(client, id, t.sessionId, deadline, opts.wait ?? true) : cancelSession(client, id, deadline, opts.wait ?? true);
}

async function cancelTurn(client: Client, turnId: string, sessionId: string, deadline: number, wait: boolean): Promise<Cancelled> {
  const d = await describeTurn(client, turnId, sessionId);
  if (d.status.name !== 'RUNNING') {
    const how = await endedAs(client, turnId, d);
    throw new UserError(`turn ${turnId} has already finished (${how}); there is nothing to cancel`, `see how it went with \`harness trace ${turnId}\``);
  }
  const parent = d.parentExecution?.workflowId;
  await client.workflow.getHandle(turnId).cancel();
  if (!wait) return { kind: 'turn', sessionId, turnId, requested: true };
  const terminatedBy = await turnStopped(client, turnId, d.runId, d.taskQueue, deadline);
  // The session has taken the turn's end once it no longer names it: a message sent now is taken.
  if (parent === sessionId) await sessionLetGo(client, sessionId, turnId, deadline);
  return { kind: 'turn', sessionId, turnId, terminatedBy };
}

async function cancelSession(client: Client, sessionId: string, deadline: number, wait: boolean): Promise<Cancelled> {
  const d = await describeSession(client, sessionId);
  if (d.status.name !== 'RUNNING') {
    const how = d.status.name === 'COMPLETED' ? 'ended' : `finished (${statusWord(d.status.name)})`;
    throw new UserError(`session ${sessionId} has already ${how}; there is nothing to cancel`, `see it with \`harness status ${sessionId}\``);
  }
  const handle = client.workflow.getHandle(sessionId);
  try {
    await handle.executeUpdate(endSessionUpdate, { args: [{ reason: 'cancelled' }] });
  } catch (err) {
    // Ended before (`harness end` while a turn runs): it is cancelling that turn that is left.
    if (!(err instanceof WorkflowUpdateFailedError)) throw err;
    if (!/already ended/.test(rootCauseMessage(err))) throw new UserError(`session ${sessionId} refused to end: ${rootCauseMessage(err)}`, `see it with \`harness status ${sessionId}\``);
  }
  // Ended, the session starts no turn but one whose message it had already taken: each turn it
  // names is cancelled until it closes.
  const cancelled: string[] = [];
  let workerChecked = false;
  const started = Date.now();
  for (;;) {
    const now = await handle.describe();
    if (now.status.name !== 'RUNNING') break;
    const state = (await handle.query(stateQuery)) as SessionState;
    const turnId = state.currentTurnId;
    if (turnId && !cancelled.includes(turnId)) {
      await client.workflow
        .getHandle(turnId)
        .cancel()
        .catch((err: unknown) => {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
        });
      cancelled.push(turnId);
    }
    if (!wait) return { kind: 'session', sessionId, ...(turnId ? { turnId } : {}), requested: true };
    if (!workerChecked && Date.now() - started >= WORKER_CHECK_AFTER_MS) {
      workerChecked = true;
      await requirePoller(client, now.taskQueue, `session ${sessionId}`);
    }
    if (Date.now() >= deadline) throw notYet(`session ${sessionId} was asked to end${cancelled.length ? ' and its turn to stop' : ''}`, sessionId);
    await sleep(LOOK_EVERY_MS);
  }
  const turnId = cancelled.at(-1);
  if (!turnId) return { kind: 'session', sessionId };
  return { kind: 'session', sessionId, turnId, terminatedBy: await endedAs(client, turnId, await client.workflow.getHandle(turnId).describe()) };
}

/** Waits until the turn closed (cancelling a run it continued into as new); returns how it ended. */
async function turnStopped(client: Client, turnId: string, runId: string, taskQueue: string, deadline: number): Promise<string> {
  const handle = client.workflow.getHandle(turnId);
  const started = Date.now();
  let cancelledRun = runId;
  let workerChecked = false;
  for (;;) {
    const d = await handle.describe();
    if (d.status.name !== 'RUNNING') return endedAs(client, turnId, d);
    // A cancellation that came as the run continued as new stays with the old run: ask the new one too.
    if (d.runId !== cancelledRun) {
      await handle.cancel();
      cancelledRun = d.runId;
    }
    if (!workerChecked && Date.now() - started >= WORKER_CHECK_AFTER_MS) {
      workerChecked = true;
      await requirePoller(client, taskQueue, `turn ${turnId}`);
    }
    if (Date.now() >= deadline) throw notYet(`turn ${turnId} was asked to stop`, sessionOfTurnId(turnId));
    await sleep(LOOK_EVERY_MS);
  }
}

/** Waits until the session no longer names the turn as its current one (it recorded the turn's end). */
async function sessionLetGo(client: Client, sessionId: string, turnId: string, deadline: number): Promise<void> {
  const handle = client.workflow.getHandle(sessionId);
  while (Date.now() < deadline) {
    const d = await handle.describe();
    if (d.status.name !== 'RUNNING') return;
    const state = (await handle.query(stateQuery)) as SessionState;
    if (state.currentTurnId !== turnId) return;
    await sleep(LOOK_EVERY_MS);
  }
}

/** How a closed turn ended: its result's `terminated_by`, or the workflow's status. */
async function endedAs(client: Client, turnId: string, d: WorkflowExecutionDescription): Promise<string> {
  if (d.status.name !== 'COMPLETED') return statusWord(d.status.name);
  const r = (await client.workflow.getHandle(turnId, d.runId).result().catch(() => undefined)) as TurnResult | undefined;
  return r?.terminated_by ?? 'completed';
}

/** The turn's description, or a one-line error saying what is wrong with the id. */
async function describeTurn(client: Client, turnId: string, sessionId: string): Promise<WorkflowExecutionDescription> {
  try {
    const d = await client.workflow.getHandle(turnId).describe();
    if (d.type !== 'turnWorkflow') throw new UserError(`${turnId} is not a turn (it is a ${d.type})`, 'name a turn as <session>/turn-N, or a session by its id');
    return d;
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  const session = await describeOrUndefined(client, sessionId);
  if (!session) throw new UserError(`no session named ${sessionId}, so no turn ${turnId}`, 'list sessions with `harness sessions`');
  const agent = parseAgentTurnId(turnId);
  if (agent) throw new UserError(`turn ${agent.parentTurnId} started no sub-agent turn ${turnId}`, `see its calls with \`harness trace ${agent.parentTurnId}\``);
  throw new UserError(`session ${sessionId} has no turn ${turnNumberOf(turnId)}`, `see its turns with \`harness status ${sessionId}\``);
}

/** The session's description, or a one-line error for an id that names no session. */
async function describeSession(client: Client, sessionId: string): Promise<WorkflowExecutionDescription> {
  const d = await describeOrUndefined(client, sessionId);
  if (d?.type === 'sessionWorkflow') return d;
  if (!d && (await describeTrialTurn(client, sessionId).catch(() => undefined))) throw notASession(sessionId, 'an eval trial');
  if (d) throw notASession(sessionId, `a ${d.type}`);
  throw new UserError(`no session named ${sessionId}`, 'list sessions with `harness sessions`; a turn is named <session>/turn-N');
}

async function describeOrUndefined(client: Client, workflowId: string): Promise<WorkflowExecutionDescription | undefined> {
  try {
    return await client.workflow.getHandle(workflowId).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/** A cancellation only a worker carries out: none polling is said at once, not after the whole wait. */
async function requirePoller(client: Client, taskQueue: string, what: string): Promise<void> {
  if ((await workerPresence(client, taskQueue)) !== 'absent') return;
  throw new UserError(`${what} is cancelled but has not stopped: ${noWorker(taskQueue, addressOf(client)).text}`, `it stops once a worker runs it; ${NO_WORKER_HINT}`);
}

function notYet(what: string, sessionId: string): UserError {
  return new UserError(`${what} but is still running; the cancellation stays asked for`, `see it with \`harness status ${sessionId}\`, or wait longer with --wait-timeout`);
}

/** CANCELLED → cancelled, TIMED_OUT → timed out. */
function statusWord(status: string): string {
  return status.toLowerCase().replace(/_/g, ' ');
}
