/**
 * Waking a session whose turn sleeps in a `wait` call, from any process (`harness wake`,
 * HarnessClient.wake): the wake is an update on the turn, naming the wait call the caller found
 * sleeping; its validator refuses it (nothing written) when the turn no longer sleeps.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { Sleeping, TurnState } from '../deterministic/session-state';
import { rootCauseMessage } from '../deterministic/errors';
import { turnStateQuery, wakeUpdate, type WakeInput } from '../deterministic/messages';
import { UserError } from '../machine/errors';
import { deliverUpdate, lookUntil, type TroubleWait } from './trouble-wait';
import { sessionState } from './session-client';

/** What a wake ended: the turn (to wait on) and the wait call, with the time it would have slept until. */
export interface Woken {
  turnId: string;
  sleeping: Sleeping;
}

/** The session is not sleeping: one line saying what it does, and how to see more. */
function notSleeping(sessionId: string, status: string): UserError {
  return new UserError(`session ${sessionId} is not sleeping (status: ${status})`, `only a turn waiting in a \`wait\` call can be woken; see \`harness status ${sessionId}\``);
}

/** Wakes the session's sleeping turn; `by` names who woke it (the model reads it with `reason`). One-line errors when nothing sleeps. */
export async function wakeSession(client: Client, sessionId: string, opts: { reason?: string; by?: string; troubleWait?: TroubleWait } = {}): Promise<Woken> {
  const { troubleWait } = opts;
  const state = await sessionState(client, sessionId, troubleWait);
  const turnId = state.currentTurnId;
  if (!turnId) throw notSleeping(sessionId, state.status);
  const handle = client.workflow.getHandle(turnId);
  const ts = (troubleWait ? await lookUntil(client, turnId, 'query', () => handle.query(turnStateQuery), 20_000, troubleWait) : await handle.query(turnStateQuery)) as TurnState;
  if (!ts.sleeping) throw notSleeping(sessionId, ts.status);
  const sleeping = ts.sleeping;
  const input: WakeInput = { callId: sleeping.callId, ...(opts.reason?.trim() ? { reason: opts.reason.trim() } : {}), ...(opts.by ? { by: opts.by } : {}) };
  const send = (updateId: string, signal?: AbortSignal) => {
    const run = () => handle.executeUpdate(wakeUpdate, { args: [input], updateId });
    return signal ? client.withAbortSignal(signal, run) : run();
  };
  try {
    await (troubleWait ? deliverUpdate(client, turnId, send, troubleWait) : send(randomUUID()));
  } catch (err) {
    // It woke (or ended) between the look and the wake.
    if (err instanceof WorkflowUpdateFailedError) throw new UserError(`turn ${turnId} refused the wake: ${rootCauseMessage(err)}`, `see \`harness status ${sessionId}\``);
    throw err;
  }
  return { turnId, sleeping };
}
