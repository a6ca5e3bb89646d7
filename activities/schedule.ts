/**
 * The activities of a schedule's firing (workflows/schedule.ts), through the worker's own client:
 * deliverScheduledMessage sends the message as `harness run` does (sendMessage update; for a new
 * session with the same start as client/session-client.ts, carrying the schedule's id in its
 * memo), awaitScheduledTurn waits for that turn's end.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { WithStartWorkflowOperation, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { sendMessageUpdate, type SendMessageResult } from '../deterministic/messages';
import { rootCauseMessage } from '../deterministic/errors';
import { SCHEDULE_MEMO, type ScheduledMessage } from '../deterministic/schedule';
import type { TurnResult } from '../deterministic/session';
import { withHeartbeat } from './heartbeat';

/** A firing's message with the session it goes to and the id its update is sent under. */
export interface DeliverScheduledInput extends ScheduledMessage {
  sessionId: string;
  updateId: string;
}

/** The session will not take the message: final, the firing fails with this reason. */
const refused = (why: string) => ApplicationFailure.nonRetryable(why, 'SCHEDULE_TARGET');

/** Sends the firing's message; returns the turn it started. */
export async function deliverScheduledMessage(input: DeliverScheduledInput): Promise<SendMessageResult> {
  const { client, info } = Context.current();
  const { sessionId, updateId } = input;
  const message = { text: input.text, ...(input.maxSteps !== undefined ? { maxSteps: input.maxSteps } : {}) };
  try {
    if (!input.config) {
      const handle = client.workflow.getHandle(sessionId);
      const d = await handle.describe().catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError) throw refused(`no session named ${sessionId}`);
        throw err;
      });
      if (d.type !== 'sessionWorkflow') throw refused(`${sessionId} is not a session`);
      if (d.status.name !== 'RUNNING') throw refused(`session ${sessionId} has ended (${d.status.name.toLowerCase()})`);
      return await handle.executeUpdate(sendMessageUpdate, { args: [message], updateId });
    }
    const startWorkflowOperation = new WithStartWorkflowOperation('sessionWorkflow', {
      workflowId: sessionId,
      taskQueue: info.taskQueue,
      args: [{ sessionId, config: input.config }],
      memo: { [SCHEDULE_MEMO]: input.scheduleId },
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
    });
    return await client.workflow.executeUpdateWithStart(sendMessageUpdate, { args: [message], updateId, startWorkflowOperation });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw refused(`session ${sessionId} refused the message: ${rootCauseMessage(err)}`);
    if (err instanceof WorkflowExecutionAlreadyStartedError) throw refused(`session ${sessionId} has ended`);
    throw err;
  }
}

/** Waits for the turn to end; its outcome (how it ended, or `failed` for a turn that returned no result). */
export async function awaitScheduledTurn(input: { turnId: string }): Promise<{ outcome: string }> {
  const { client } = Context.current();
  return withHeartbeat(async () => {
    try {
      // result() follows the turn's continue-as-new chain to its end.
      const r = (await client.workflow.getHandle(input.turnId).result()) as TurnResult;
      return { outcome: r.terminated_by };
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) throw err;
      return { outcome: 'failed' };
    }
  });
}
