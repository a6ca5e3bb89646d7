/**
 * Client-side session operations shared by the CLI, tests, evals and benchmarks:
 * send a message (starting the session if needed), wait for a turn, answer, inspect.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Client,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import type { PendingApproval, SessionConfig, SessionState, TurnResult, TurnState } from '../common/session';
import {
  answerUpdate,
  decideApprovalsUpdate,
  endSessionUpdate,
  sendMessageUpdate,
  stateQuery,
  turnStateQuery,
  type ApprovalDecisionInput,
  type DecidedCall,
  type SendMessageResult,
} from '../workflows/definitions';
import { rootCauseMessage } from '../common/errors';
import { UserError } from './errors';

/** How a wait for a turn ended: with its result, or with the turn waiting on a human. */
export type TurnOutcome = { kind: 'done'; result: TurnResult } | { kind: 'waiting'; state: TurnState };

/**
 * Sends a user message. With `config` the session is started when it does not exist yet;
 * without, the session must exist (it keeps the configuration it started with).
 */
export async function sendMessage(
  client: Client,
  opts: { taskQueue: string; sessionId: string; config?: SessionConfig; text: string; maxSteps?: number },
): Promise<SendMessageResult> {
  const message = { text: opts.text, ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}) };
  if (!opts.config) {
    await sessionState(client, opts.sessionId);
    try {
      return await client.workflow.getHandle(opts.sessionId).executeUpdate(sendMessageUpdate, { args: [message] });
    } catch (err) {
      throw rejected(err, `session ${opts.sessionId}`, `see \`harness status ${opts.sessionId}\``);
    }
  }
  const start = new WithStartWorkflowOperation('sessionWorkflow', {
    workflowId: opts.sessionId,
    taskQueue: opts.taskQueue,
    args: [{ sessionId: opts.sessionId, config: opts.config }],
    workflowIdConflictPolicy: 'USE_EXISTING',
    // An ended session stays ended (its id, turns and workspace belong to it); only a
    // failed or terminated one may be started afresh under the same id.
    workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
  });
  try {
    return await client.workflow.executeUpdateWithStart(sendMessageUpdate, {
      args: [message],
      startWorkflowOperation: start,
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new UserError(`session ${opts.sessionId} has ended`, 'start a new session (omit --session or pick a new id)');
    }
    throw rejected(err, `session ${opts.sessionId}`);
  }
}

/** Waits until the turn ends or stops to wait on a human; reports step progress on the way. */
export async function waitForTurn(
  client: Client,
  turnId: string,
  opts: { pollMs?: number; onStep?: (step: number) => void } = {},
): Promise<TurnOutcome> {
  const handle = client.workflow.getHandle(turnId);
  let result: TurnResult | undefined;
  let failure: unknown;
  const settled = handle.result().then(
    (r) => void (result = r as TurnResult),
    (e) => void (failure = e),
  );
  let lastStep = 0;
  for (;;) {
    await Promise.race([settled, sleep(opts.pollMs ?? 250)]);
    if (result) {
      await sessionCaughtUp(client, turnId);
      return { kind: 'done', result };
    }
    if (failure) throw new UserError(`turn ${turnId} failed: ${rootCauseMessage(failure)}`, `inspect it with \`harness status ${sessionOf(turnId)}\``);
    const state = (await handle.query(turnStateQuery)) as TurnState;
    if (state.step !== lastStep) opts.onStep?.((lastStep = state.step));
    if (state.status === 'waiting_for_user' || state.status === 'waiting_for_approval') return { kind: 'waiting', state };
  }
}

/** The session a turn id belongs to (`<session>/turn-N`). */
function sessionOf(turnId: string): string {
  const at = turnId.lastIndexOf('/turn-');
  return at > 0 ? turnId.slice(0, at) : turnId;
}

/**
 * A turn's result reaches its session one workflow task after the turn ends; waiting for
 * the session to record it means the next message is accepted right away.
 */
async function sessionCaughtUp(client: Client, turnId: string, timeoutMs = 10_000): Promise<void> {
  const session = client.workflow.getHandle(sessionOf(turnId));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const s = (await session.query(stateQuery)) as SessionState;
      if (s.currentTurnId !== turnId) return;
    } catch {
      return; // a turn started on its own, or a session that has gone: nothing to wait for
    }
    await sleep(25);
  }
}

/** The session's `state`, or a one-line error when there is no such session. */
export async function sessionState(client: Client, sessionId: string): Promise<SessionState> {
  try {
    return (await client.workflow.getHandle(sessionId).query(stateQuery)) as SessionState;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || /not found/i.test((err as Error).message)) {
      throw new UserError(`no session named ${sessionId}`, 'list sessions with `harness sessions`');
    }
    throw err;
  }
}

/**
 * Answers the session's pending question; returns the turn id to wait on. Who answered is
 * the client's identity, which Temporal records with the update.
 */
export async function answerQuestion(client: Client, sessionId: string, text: string): Promise<string> {
  const state = await sessionState(client, sessionId);
  const turnId = state.currentTurnId;
  if (!turnId) throw new UserError(`session ${sessionId} is not waiting for an answer (status: ${state.status})`, `see \`harness status ${sessionId}\``);
  const turn = client.workflow.getHandle(turnId);
  const ts = (await turn.query(turnStateQuery)) as TurnState;
  if (ts.status !== 'waiting_for_user') {
    throw new UserError(`session ${sessionId} is not waiting for an answer (status: ${ts.status})`, `see \`harness status ${sessionId}\``);
  }
  try {
    await turn.executeUpdate(answerUpdate, { args: [{ text }] });
  } catch (err) {
    throw rejected(err, `turn ${turnId}`, `see the pending question with \`harness status ${sessionId}\``);
  }
  return turnId;
}

/** What a person decides: the calls they were shown (with digests), or ids to look up, or all pending. */
export interface DecisionRequest {
  /** Exactly the calls shown to the person; their digests bind the decision to what was shown. */
  calls?: DecidedCall[];
  /** Ids to decide among the pending calls (default: all of them), looked up just before deciding. */
  callIds?: string[];
  approve: boolean;
  reason?: string;
  always?: boolean;
}

/**
 * Decides pending approvals of the session's current turn. Each call goes with the digest of
 * the tool and arguments the caller read, so a call that changed in between is refused.
 * Returns the turn to wait on and the calls decided (for showing what was decided).
 */
export async function decideApprovals(client: Client, sessionId: string, request: DecisionRequest): Promise<{ turnId: string; calls: PendingApproval[] }> {
  const state = await sessionState(client, sessionId);
  const turnId = state.currentTurnId;
  const notWaiting = (status: string) =>
    new UserError(`session ${sessionId} has no pending approval (status: ${status})`, `see \`harness status ${sessionId}\``);
  if (!turnId) throw notWaiting(state.status);
  const turn = client.workflow.getHandle(turnId);
  const ts = (await turn.query(turnStateQuery)) as TurnState;
  if (ts.status !== 'waiting_for_approval' || ts.pending?.kind !== 'approvals') throw notWaiting(ts.status);
  const pending = ts.pending.calls;
  const wanted = request.calls?.map((c) => c.callId) ?? request.callIds ?? pending.map((c) => c.callId);
  const shown = pending.filter((c) => wanted.includes(c.callId));
  const unknown = wanted.filter((id) => !pending.some((c) => c.callId === id));
  if (unknown.length) {
    throw new UserError(
      `turn ${turnId} refused the request: call ${unknown[0]} is not pending (unknown or already decided); pending: ${pending.map((c) => c.callId).join(', ')}`,
      `see the pending calls with \`harness status ${sessionId}\``,
    );
  }
  const calls = request.calls ?? shown.map((c) => ({ callId: c.callId, digest: c.digest ?? '' }));
  const decision: ApprovalDecisionInput = {
    calls,
    approve: request.approve,
    ...(request.reason ? { reason: request.reason } : {}),
    ...(request.always ? { always: true } : {}),
  };
  try {
    await turn.executeUpdate(decideApprovalsUpdate, { args: [decision] });
  } catch (err) {
    throw rejected(err, `turn ${turnId}`, `see the pending calls with \`harness status ${sessionId}\``);
  }
  return { turnId, calls: shown };
}

/** Ends a session (it finishes once idle). */
export async function endSession(client: Client, sessionId: string, reason?: string): Promise<void> {
  await sessionState(client, sessionId);
  try {
    await client.workflow.getHandle(sessionId).executeUpdate(endSessionUpdate, { args: [{ ...(reason ? { reason } : {}) }] });
  } catch (err) {
    throw rejected(err, `session ${sessionId}`);
  }
}

/** Whether a session with this id was ever started (running or closed). */
export async function sessionExists(client: Client, sessionId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(sessionId).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** An update the workflow's validator refused becomes a one-line user error. */
function rejected(err: unknown, what: string, hint?: string): unknown {
  if (err instanceof WorkflowUpdateFailedError) {
    return new UserError(`${what} refused the request: ${rootCauseMessage(err)}`, hint);
  }
  if (/already completed|workflow execution already (completed|finished)/i.test((err as Error)?.message ?? '')) {
    return new UserError(`${what} has ended`, 'start a new session (omit --session or pick a new id)');
  }
  return err;
}
