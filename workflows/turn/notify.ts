/**
 * The turn's webhook (a session whose config has `notify`): an event when a step's calls wait for
 * approval, when a question waits for an answer, when a model call waits for a budget decision,
 * and when the turn ends, however it ends (a turn that throws included: endToldIfThrown). Each is
 * delivered by a child workflow the turn starts and abandons (workflows/webhook.ts): the turn
 * waits only for the child to start (one server round trip), never for the delivery, so a
 * receiver that is down does not hold up the wait on a person nor the turn's result, and the
 * delivery still goes on, retried for its window, after the turn closed. Histories recorded
 * before webhooks never have `notify`, so replay never reaches this code.
 */
import { CancellationScope, ContinueAsNew, isCancellation, log, ParentClosePolicy, patched, startChild, TemporalFailure, WorkflowIdReusePolicy } from '@temporalio/workflow';
import { rootCauseMessage } from '../../deterministic/errors';
import type { TurnInput, TurnResult } from '../../deterministic/session';
import type { Pending } from '../../deterministic/session-state';
import { budgetEventKey, webhookEventId, type WebhookEvent } from '../../deterministic/webhook';
import type { webhookWorkflow } from '../webhook';
import type { RunEvents } from './run-events';

/**
 * A budget wait's event: turns that waited for a budget with a webhook before recorded no child
 * there, so only a run that took this marker starts one (it is taken only at such a wait).
 */
export const BUDGET_WEBHOOK_PATCH = 'budget-webhook';

/**
 * The end event of a turn that throws: turns that failed so before closed with no child started,
 * so only a run that took this marker starts one (it is taken only as such a turn fails).
 */
export const THROWN_END_PATCH = 'turn-end-on-throw';

/** What a turn that throws tells its webhook with: filled in by the turn as it starts. */
export interface ThrownEnd {
  notifier?: TurnNotifier;
  /** The step the turn had reached. */
  step?: () => number;
}

/**
 * Runs a turn; one that fails by throwing (an activity's permanent failure escaping its loop, a
 * cancellation before its loop) still starts its end event, `failed` or `cancelled` with why, as
 * its session records it, and the failure goes on. A continuation (continue-as-new) is no end;
 * neither is a bug in the workflow's code (not a Temporal failure: its task is retried).
 */
export async function endToldIfThrown<T>(end: ThrownEnd, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const { notifier } = end;
    if (notifier && !notifier.endStarted && err instanceof TemporalFailure && !(err instanceof ContinueAsNew) && patched(THROWN_END_PATCH)) {
      const cancelled = isCancellation(err);
      notifier.ended({ terminated_by: cancelled ? 'cancelled' : 'failed', answer: cancelled ? 'The turn was cancelled.' : `The turn failed: ${rootCauseMessage(err)}`, steps: end.step?.() ?? 0 });
      await CancellationScope.nonCancellable(() => notifier.settled());
    }
    throw err;
  }
}

export class TurnNotifier {
  private readonly starts: Array<Promise<void>> = [];
  /** The turn's end event was started (a turn ends once). */
  endStarted = false;

  constructor(
    private readonly input: TurnInput,
    private readonly events: RunEvents,
  ) {}

  /** A wait on a person begins: its event is started, not awaited. */
  waiting(pending: Pending): void {
    if (pending.kind === 'approvals' && pending.calls.length) {
      this.start({ ...this.base('approval', pending.calls[0]!.callId), calls: pending.calls });
    } else if (pending.kind === 'question') {
      this.start({ ...this.base('question', pending.callId), question: { callId: pending.callId, question: pending.question } });
    } else if (pending.kind === 'budget' && patched(BUDGET_WEBHOOK_PATCH)) {
      const { kind: _kind, ...budget } = pending;
      this.start({ ...this.base('budget', budgetEventKey(budget)), budget });
    }
  }

  /** The turn ended (its last run): its event is started; settled() waits for the starts. */
  ended(result: Pick<TurnResult, 'terminated_by' | 'answer' | 'steps'>): void {
    this.endStarted = true;
    this.start({ ...this.base('turn_end', 'end'), end: { terminated_by: result.terminated_by, answer: result.answer, steps: result.steps } });
  }

  /** Every delivery this run started has started (so none is lost when the run closes). */
  async settled(): Promise<void> {
    await Promise.all(this.starts);
  }

  private base(kind: WebhookEvent['kind'], id: string): WebhookEvent {
    const agentPath = this.input.subAgent ? { agentPath: this.input.subAgent.path } : {};
    return { eventId: webhookEventId(this.input.turnId, kind, id), kind, sessionId: this.input.sessionId, turnId: this.input.turnId, ...agentPath, occurredAt: '' };
  }

  private start(event: WebhookEvent): void {
    const notify = this.input.config.notify;
    if (!notify) return;
    const { url, retryWindowMs, retryInitialMs, retryMaxIntervalMs } = notify;
    const retry = { ...(retryWindowMs ? { retryWindowMs } : {}), ...(retryInitialMs ? { retryInitialMs } : {}), ...(retryMaxIntervalMs ? { retryMaxIntervalMs } : {}) };
    // The start's events (initiated, started) and the workflow task they wake.
    this.events.add('wait');
    const started = CancellationScope.nonCancellable(() =>
      startChild<typeof webhookWorkflow>('webhookWorkflow', {
        // The event's id: the same event is never delivered by two children (a turn run again included).
        workflowId: `webhook:${event.eventId}`,
        args: [{ delivery: { url, event }, retry }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      }),
    ).then(
      () => undefined,
      // Already started (the same event from an earlier run of the turn), or the server refused:
      // the turn goes on either way; a webhook is a notice, the decision is in the turn.
      (err: Error) => log.warn('webhook not started', { eventId: event.eventId, error: err.message }),
    );
    this.starts.push(started);
  }
}
