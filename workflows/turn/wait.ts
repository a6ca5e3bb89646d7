/**
 * The `wait` tool, implemented in the turn workflow: the turn sleeps on a durable timer (no model
 * call, no activity while it waits) until the time the model asked for, or until someone wakes it
 * (the `wake` update, `harness wake`). The timer is Temporal's, so the wait survives worker and
 * server restarts; its time is workflow time. While it sleeps the turn's state (and, through the
 * turnStatus signal, its session's) names until when and why, its status staying `running`.
 *
 * Behind the `wait-tool` patch, taken directly when a wait call runs (never through `since`):
 * turns recorded before it never ran one, and a run that makes no wait call records no marker.
 * Offering the tool changes only the model call's input, which replay does not compare (as the
 * tool mode); a recorded turn whose model called `wait` before there was one replays its refusal.
 */
import { condition, getExternalWorkflowHandle, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ToolOutcome } from '../../deterministic/activity-types';
import { toolError } from '../../deterministic/errors';
import { MAX_MESSAGE_BYTES, turnStatusSignal, utf8Length, wakeUpdate, type TurnStatusSignal, type WakeInput } from '../../deterministic/messages';
import type { TurnInput } from '../../deterministic/session';
import type { TurnState } from '../../deterministic/session-state';
import { DEFAULT_MAX_WAIT_MS, isoOf, waitPlan, waitResult } from '../../deterministic/wait';
import type { RunEvents } from './run-events';
import { workflowNow } from '../workflow-clock';

/** Since this patch a `wait` call sleeps the turn; before, there was no such tool. */
export const WAIT_TOOL_PATCH = 'wait-tool';

/**
 * The turn's waits on its own clock. Its update handler is registered as it is made (before the
 * turn's first await); `beforeWait` records what ran locally before the turn sleeps (model-call.ts).
 */
export class TurnSleeper {
  private woken: WakeInput | undefined;

  constructor(
    private readonly input: TurnInput,
    private readonly state: TurnState,
    private readonly events: RunEvents,
    private readonly beforeWait: () => Promise<void>,
  ) {
    setHandler(
      wakeUpdate,
      (w) => {
        this.events.add('message');
        this.woken = { ...(w.reason?.trim() ? { reason: w.reason.trim() } : {}), ...(w.by ? { by: w.by } : {}) };
        const s = this.state.sleeping!;
        return { woken: true as const, callId: s.callId, until: s.until };
      },
      { validator: (w) => this.validateWake(w) },
    );
  }

  /** The wait call's result: how long the turn slept and whether it was woken; bad arguments are a result the model reads. */
  async wait(callId: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    if (!patched(WAIT_TOOL_PATCH)) return toolError('UNKNOWN_TOOL', 'There is no tool named "wait".', { recoverable: false });
    const startMs = workflowNow();
    const plan = waitPlan(args, startMs, this.input.config.limits.maxWaitMs ?? DEFAULT_MAX_WAIT_MS);
    if ('error' in plan) return plan.error;
    await this.beforeWait();
    this.events.add('wait');
    const sleeping = { callId, until: isoOf(plan.untilMs), reason: plan.reason };
    this.woken = undefined;
    this.state.sleeping = sleeping;
    try {
      await notifyParent({ turnId: this.input.turnId, status: 'running', sleeping });
      // The timer is cancelled when a wake comes first (so a fired timer in history means it slept the whole time).
      await condition(() => this.woken !== undefined, plan.ms);
    } finally {
      // A cancelled turn ends here too: its session forgets the sleep as the turn ends.
      this.state.sleeping = undefined;
    }
    const woken = this.woken;
    this.woken = undefined;
    await notifyParent({ turnId: this.input.turnId, status: 'running' });
    return waitResult(plan, startMs, { nowMs: workflowNow(), ...(woken ? { woken } : {}) });
  }

  /** Refuses a wake that has nothing to end, before anything is written to history. */
  private validateWake(w: WakeInput): void {
    const s = this.state.sleeping;
    if (!s) throw new Error('the turn is not sleeping');
    if (w?.callId && w.callId !== s.callId) throw new Error(`call ${w.callId} is not the one sleeping (${s.callId} is)`);
    if (w?.reason !== undefined && typeof w.reason !== 'string') throw new Error('the reason must be text');
    if (w?.by !== undefined && typeof w.by !== 'string') throw new Error('by must be text');
    // The reason and who woke it go into the conversation every later model call carries.
    if (utf8Length(`${w?.reason ?? ''}${w?.by ?? ''}`) > MAX_MESSAGE_BYTES) throw new Error(`the reason is more than ${MAX_MESSAGE_BYTES / 1024} KiB of UTF-8 text`);
  }
}

/** Tells the parent (the session, or the turn of a sub-agent) that the turn sleeps or runs again; a turn on its own has none. */
async function notifyParent(status: TurnStatusSignal): Promise<void> {
  const parent = workflowInfo().parent;
  if (parent) await getExternalWorkflowHandle(parent.workflowId).signal(turnStatusSignal, status);
}
