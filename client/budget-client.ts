/**
 * Deciding a turn that waits for its budget, from any process: raise the budget it reached
 * (`harness approve <session> --budget +N`) or stop the turn (`harness deny`), which then ends
 * `budget_exceeded` keeping its work. Like approvals, the decision is an update on the turn;
 * its validator refuses a stale or mismatched one before anything is written.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { Pending, TurnState } from '../deterministic/session-state';
import { budgetAmount } from '../deterministic/budget';
import { rootCauseMessage } from '../deterministic/errors';
import { decideBudgetUpdate, turnStateQuery, type BudgetDecisionInput, type BudgetDecisionResult } from '../deterministic/messages';
import { UsageError, UserError } from '../machine/errors';
import { deliverUpdate, lookUntil, type TroubleWait } from './trouble-wait';
import { sessionState } from './session-client';
import { decidedAt, waitingTurnOf, withConfirmedWait } from './turn-record';

/** A budget wait as the turn shows it. */
export type BudgetPending = Extract<Pending, { kind: 'budget' }>;

/** What a budget decision applied to: the turn to wait on, the wait it ended, what the turn did. */
export interface BudgetDecided {
  turnId: string;
  pending: BudgetPending;
  result: BudgetDecisionResult;
}

/** The budget wait of the session's current turn, or undefined when it waits for nothing of the kind. */
export async function pendingBudget(client: Client, sessionId: string, troubleWait?: TroubleWait): Promise<{ turnId: string; pending: BudgetPending } | undefined> {
  const state = await sessionState(client, sessionId, troubleWait);
  const turnId = await waitingTurnOf(client, sessionId, state);
  if (!turnId || state.status !== 'waiting_for_budget') return undefined;
  const handle = client.workflow.getHandle(turnId);
  const asked = (troubleWait ? await lookUntil(client, turnId, 'query', () => handle.query(turnStateQuery), 20_000, troubleWait) : await handle.query(turnStateQuery)) as TurnState;
  // A sub-agent's budget wait as that sub-agent says it (the amounts shown and decided on).
  const ts = await withConfirmedWait(client, turnId, asked);
  return ts.pending?.kind === 'budget' && decidedAt(turnId, ts.pending) ? { turnId, pending: ts.pending } : undefined;
}

/** Raises the budget the session's turn waits on, or stops the turn; one-line errors when it waits for no budget. */
export async function decideBudget(client: Client, sessionId: string, decision: BudgetDecisionInput, troubleWait?: TroubleWait): Promise<BudgetDecided> {
  const waiting = await pendingBudget(client, sessionId, troubleWait);
  if (!waiting) throw new UserError(`session ${sessionId} is not waiting for a budget`, `see \`harness status ${sessionId}\``);
  const { turnId, pending } = waiting;
  if (decision.raise && decision.raise.unit !== pending.unit) {
    const example = pending.unit === 'usd' ? '--budget +$0.50' : '--budget +5000';
    throw new UsageError(`the turn waits for its ${pending.scope} budget in ${pending.unit === 'usd' ? 'money' : 'tokens'} (${budgetAmount(pending.unit, pending.limit)}); raise it in the same unit`, `e.g. harness approve ${sessionId} ${example}`);
  }
  // A sub-agent's wait is decided at the child turn that waits (the session's turn shows it).
  const target = decidedAt(turnId, pending)!;
  const send = (updateId: string, signal?: AbortSignal) => {
    const run = () => client.workflow.getHandle(target).executeUpdate(decideBudgetUpdate, { args: [decision], updateId });
    return signal ? client.withAbortSignal(signal, run) : run();
  };
  try {
    const result = troubleWait ? await deliverUpdate(client, target, send, troubleWait) : await send(randomUUID());
    return { turnId, pending, result };
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw new UserError(`turn ${turnId} refused the request: ${rootCauseMessage(err)}`, `see \`harness status ${sessionId}\``);
    throw err;
  }
}
