/**
 * Client-side session operations shared by the CLI, tests, evals and benchmarks:
 * send a message (starting the session if needed), answer, decide approvals, inspect;
 * waiting for a turn is in turn-wait.ts (re-exported here).
 */
import { randomUUID } from 'node:crypto';
import { Client, WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, WorkflowFailedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import type { PendingApproval, SessionState, TurnState } from '../deterministic/session-state';
import type { SessionConfig } from '../deterministic/session-config';
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
  type WhileRunning,
  WHILE_RUNNING,
  MAX_MESSAGE_BYTES,
  utf8Length,
} from '../deterministic/messages';
import { rootCauseMessage, splitNotDeclared } from '../deterministic/errors';
import { UsageError, UserError } from '../machine/errors';
import { describeTrialTurn, notASession } from './trial-ids';
import { NO_WORKER_HINT } from './require-worker';
import { deliverUpdate, lookUntil, type TroubleWait } from './trouble-wait';
import { callTrouble, look } from './wait-progress';
import { decidedAt, waitingTurnOf, withConfirmedWait } from './turn-record';

/**
 * Refuses text the session would refuse — empty, or over MAX_MESSAGE_BYTES of UTF-8 — as a
 * usage error, so nothing is sent or started. `what` names it in the message (`the task`).
 */
export function checkMessage(text: string, what = 'the message', emptyHint = 'say what the agent should do'): void {
  if (text.trim() === '') throw new UsageError(`${what} must be non-empty text`, emptyHint);
  const bytes = utf8Length(text);
  if (bytes > MAX_MESSAGE_BYTES) {
    throw new UsageError(
      `${what} is ${bytes} bytes; at most ${MAX_MESSAGE_BYTES / 1024} KiB of UTF-8 text is accepted`,
      'shorten it; put large material in files the agent can read (the session workspace) and refer to them',
    );
  }
}

/**
 * Sends a user message. With `config` the session is started when it does not exist yet;
 * without, the session must exist (it keeps the configuration it started with). Empty or
 * oversized text is refused before anything is sent (see checkMessage).
 */
export async function sendMessage(
  client: Client,
  opts: { taskQueue: string; sessionId: string; config?: SessionConfig; text: string; maxSteps?: number; whileRunning?: WhileRunning; troubleWait?: TroubleWait },
): Promise<SendMessageResult> {
  checkMessage(opts.text);
  if (opts.whileRunning !== undefined && !WHILE_RUNNING.includes(opts.whileRunning)) {
    throw new UserError(`whileRunning must be one of ${WHILE_RUNNING.join(', ')}`, 'leave it out to queue the message for a running turn');
  }
  const message = { text: opts.text, ...(opts.maxSteps ? { maxSteps: opts.maxSteps } : {}), ...(opts.whileRunning ? { whileRunning: opts.whileRunning } : {}) };
  if (!opts.config) {
    await sessionState(client, opts.sessionId, opts.troubleWait);
    try {
      return await update(client, opts.sessionId, opts.troubleWait, (updateId) =>
        client.workflow.getHandle(opts.sessionId).executeUpdate(sendMessageUpdate, { args: [message], updateId }),
      );
    } catch (err) {
      throw rejected(err, `session ${opts.sessionId}`, `see \`harness status ${opts.sessionId}\``);
    }
  }
  const config = opts.config;
  // A fresh operation per attempt (one can be used once); the same update id makes a second
  // attempt join the first one's update instead of sending the message twice.
  const start = () =>
    new WithStartWorkflowOperation('sessionWorkflow', {
      workflowId: opts.sessionId,
      taskQueue: opts.taskQueue,
      args: [{ sessionId: opts.sessionId, config }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      // An ended session stays ended (its id, turns and workspace belong to it); only a
      // failed or terminated one may be started afresh under the same id.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
    });
  try {
    return await update(client, opts.sessionId, opts.troubleWait, (updateId) =>
      client.workflow.executeUpdateWithStart(sendMessageUpdate, { args: [message], updateId, startWorkflowOperation: start() }),
    );
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) {
      throw new UserError(`session ${opts.sessionId} has ended`, 'start a new session (omit --session or pick a new id)');
    }
    throw (await refusedAtStart(client, opts.sessionId, err)) ?? rejected(err, `session ${opts.sessionId}`);
  }
}

/**
 * Why a session failed before its first turn (the update then only says the workflow completed):
 * its own failure, such as naming an MCP server its worker did not declare. Undefined otherwise.
 */
async function refusedAtStart(client: Client, sessionId: string, err: unknown): Promise<UserError | undefined> {
  if (!(err instanceof WorkflowUpdateFailedError)) return undefined;
  const handle = client.workflow.getHandle(sessionId);
  // A validator's refusal leaves the session running: only a failed one has a failure to tell.
  const status = await handle.describe().then((d) => d.status.name, () => undefined);
  if (status !== 'FAILED') return undefined;
  try {
    await handle.result();
    return undefined;
  } catch (failure) {
    if (!(failure instanceof WorkflowFailedError)) return undefined;
    const { problem, hint } = splitNotDeclared(rootCauseMessage(failure));
    return new UserError(`session ${sessionId} was refused: ${problem}`, hint || `see \`harness status ${sessionId}\``);
  }
}

/**
 * Sends an update: with `troubleWait`, through trouble until it is delivered (see deliverUpdate);
 * without, once. `send` gets the update id to use.
 */
function update<R>(client: Client, workflowId: string, troubleWait: TroubleWait | undefined, send: (updateId: string) => Promise<R>): Promise<R> {
  if (!troubleWait) return send(randomUUID());
  return deliverUpdate(client, workflowId, (updateId, signal) => client.withAbortSignal(signal, () => send(updateId)), troubleWait);
}

/** How long `status` and the commands that read a session's state wait for its query (the server gives up at 30 s). */
const STATE_QUERY_MS = 20_000;

/**
 * Runs a query on a workflow. With `troubleWait`, trouble is waited out (see lookUntil). Without,
 * the ways it can fail without a bug become one-line errors: no worker polls its task queue
 * (found out after a few seconds instead of the server's 30 s query timeout), the worker does
 * not answer, or Temporal is unreachable.
 */
async function queryOrExplain<T>(client: Client, workflowId: string, query: QueryDefinition<T>, what: string, troubleWait?: TroubleWait): Promise<T> {
  const handle = client.workflow.getHandle(workflowId);
  if (troubleWait) return lookUntil(client, workflowId, 'query', () => handle.query(query), STATE_QUERY_MS, troubleWait);
  const out = await look(client, workflowId, 'query', () => handle.query(query), STATE_QUERY_MS);
  if (out.ok) return out.value;
  if (out.trouble.kind === 'temporal') throw new UserError(out.trouble.text, TEMPORAL_HINT);
  const noneThere = /no worker polls/.test(out.trouble.text);
  throw new UserError(
    `${what} ${noneThere ? 'cannot answer' : 'did not answer'}: ${out.trouble.text}`,
    noneThere ? NO_WORKER_HINT : 'a worker polls its task queue but did not answer: it may be overloaded or stuck; see its log, or restart it',
  );
}

/** Hint when Temporal does not answer. */
export const TEMPORAL_HINT = 'check that the Temporal server runs (`harness dev` starts the embedded one) and that TEMPORAL_ADDRESS points at it; then try again';

/** The session's `state`, or a one-line error when there is no such session; with `troubleWait`, trouble is waited out. */
export async function sessionState(client: Client, sessionId: string, troubleWait?: TroubleWait): Promise<SessionState> {
  try {
    return (await queryOrExplain(client, sessionId, stateQuery, `session ${sessionId}`, troubleWait)) as SessionState;
  } catch (err) {
    if (err instanceof UserError) throw err;
    if (err instanceof WorkflowNotFoundError || /not found/i.test((err as Error).message)) {
      if (await describeTrialTurn(client, sessionId).catch(() => undefined)) throw notASession(sessionId, 'an eval trial');
      throw new UserError(`no session named ${sessionId}`, 'list sessions with `harness sessions`');
    }
    throw err;
  }
}

/** The turn's own state (what it waits for, a sub-agent's wait as that sub-agent says it), waiting out trouble with `troubleWait`. */
async function turnState(client: Client, turnId: string, troubleWait?: TroubleWait): Promise<TurnState> {
  return withConfirmedWait(client, turnId, (await queryOrExplain(client, turnId, turnStateQuery, `turn ${turnId}`, troubleWait)) as TurnState);
}

/**
 * Answers the session's pending question; returns the turn id to wait on. Who answered is
 * the client's identity, which Temporal records with the update.
 */
export async function answerQuestion(client: Client, sessionId: string, text: string, troubleWait?: TroubleWait, callId?: string): Promise<string> {
  const state = await sessionState(client, sessionId, troubleWait);
  const turnId = await waitingTurnOf(client, sessionId, state);
  if (!turnId) throw new UserError(`session ${sessionId} is not waiting for an answer (status: ${state.status})`, `see \`harness status ${sessionId}\``);
  const ts = await turnState(client, turnId, troubleWait);
  // A sub-agent's question is answered at the child turn that asks (the session's turn shows it).
  const target = decidedAt(turnId, ts.pending);
  if (ts.status !== 'waiting_for_user' || !target) {
    throw new UserError(`session ${sessionId} is not waiting for an answer (status: ${ts.status})`, `see \`harness status ${sessionId}\``);
  }
  try {
    await update(client, target, troubleWait, (updateId) => client.workflow.getHandle(target).executeUpdate(answerUpdate, { args: [{ text, ...(callId ? { callId } : {}) }], updateId }));
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
  /** With `always`: grant commands starting with these words instead of exactly the one shown. */
  pattern?: string;
}

/**
 * Decides pending approvals of the session's current turn. Each call goes with the digest of
 * the tool and arguments the caller read, so a call that changed in between is refused.
 * Returns the turn to wait on, the calls decided (for showing what was decided) and what an
 * `--always` granted for the rest of the session, as the turn recorded it.
 */
export async function decideApprovals(
  client: Client,
  sessionId: string,
  request: DecisionRequest,
  troubleWait?: TroubleWait,
): Promise<{ turnId: string; calls: PendingApproval[]; granted: string[] }> {
  const state = await sessionState(client, sessionId, troubleWait);
  const turnId = await waitingTurnOf(client, sessionId, state);
  const notWaiting = (status: string) =>
    new UserError(`session ${sessionId} has no pending approval (status: ${status})`, `see \`harness status ${sessionId}\``);
  if (!turnId) throw notWaiting(state.status);
  const ts = await turnState(client, turnId, troubleWait);
  // A sub-agent's calls are decided at the child turn that asks (the session's turn shows them).
  const target = decidedAt(turnId, ts.pending);
  if (ts.status !== 'waiting_for_approval' || ts.pending?.kind !== 'approvals' || !target) throw notWaiting(ts.status);
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
    ...(request.always && request.pattern !== undefined ? { pattern: request.pattern } : {}),
  };
  let granted: string[] = [];
  try {
    const out = await update(client, target, troubleWait, (updateId) => client.workflow.getHandle(target).executeUpdate(decideApprovalsUpdate, { args: [decision], updateId }));
    granted = out.granted ?? [];
  } catch (err) {
    throw rejected(err, `turn ${turnId}`, `see the pending calls with \`harness status ${sessionId}\``);
  }
  return { turnId, calls: shown, granted };
}

/**
 * Ends a session (it finishes once idle); with `purge`, the session then deletes what it stored
 * (client/retention.ts waits for that). Returns the state the session was in when asked.
 */
export async function endSession(client: Client, sessionId: string, reason?: string, opts: { purge?: boolean } = {}): Promise<SessionState> {
  const state = await sessionState(client, sessionId);
  try {
    await client.workflow
      .getHandle(sessionId)
      .executeUpdate(endSessionUpdate, { args: [{ ...(reason ? { reason } : {}), ...(opts.purge ? { purge: true } : {}) }] });
  } catch (err) {
    throw rejected(err, `session ${sessionId}`);
  }
  return state;
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

/** An update the workflow's validator refused, or Temporal not answering, becomes a one-line user error. */
function rejected(err: unknown, what: string, hint?: string): unknown {
  if (err instanceof WorkflowUpdateFailedError) {
    return new UserError(`${what} refused the request: ${rootCauseMessage(err)}`, hint);
  }
  const trouble = callTrouble(err, 'server', '');
  if (trouble) {
    // The update may or may not have reached the workflow before the connection broke.
    return new UserError(`${what}: the request may not have arrived: ${rootCauseMessage(err)}`, TEMPORAL_HINT);
  }
  if (/already completed|workflow execution already (completed|finished)/i.test((err as Error)?.message ?? '')) {
    return new UserError(`${what} has ended`, 'start a new session (omit --session or pick a new id)');
  }
  return err;
}
