/**
 * scheduledMessageWorkflow: one firing of a schedule (`harness schedule create`). It sends the
 * schedule's message the way `harness run` does, starting a new session or to an existing one,
 * then waits for the turn it started to end (done, failed, cancelled), so a schedule's overlap
 * policy is about turns: under `skip` a firing while the last one's turn still runs (or waits on
 * a person) is skipped. A session that does not exist, has ended or refuses the message fails the
 * firing with the session's reason.
 */
import { ApplicationFailure, proxyActivities, workflowInfo } from '@temporalio/workflow';
import { firingSessionId, scheduledMessageProblem, type ScheduledFiring, type ScheduledMessage } from '../deterministic/schedule';
import type { Activities } from './activity-options';

// Delivery rides out a worker or server hiccup; a session's refusal is final (SCHEDULE_TARGET).
const { deliverScheduledMessage } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', maximumAttempts: 10, nonRetryableErrorTypes: ['SCHEDULE_TARGET'] },
});
// The turn may wait on a person for days: alive by heartbeat, so a lost worker is replaced.
const { awaitScheduledTurn } = proxyActivities<Activities>({
  startToCloseTimeout: '30 days',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '1s', maximumAttempts: 20 },
});

/** Sends the firing's message and returns the turn it started once that turn has ended. */
export async function scheduledMessageWorkflow(input: ScheduledMessage): Promise<ScheduledFiring> {
  const problem = scheduledMessageProblem(input);
  if (problem) throw ApplicationFailure.nonRetryable(`the schedule's firing was refused: ${problem}`, 'SCHEDULE_INPUT');
  const info = workflowInfo();
  const sessionId = input.sessionId ?? firingSessionId(input.scheduleId, info.workflowId, info.runId);
  // One update id per firing: a delivery retried after its message arrived joins it instead of sending it twice.
  const sent = await deliverScheduledMessage({ ...input, sessionId, updateId: `${info.workflowId}/${info.runId}` });
  const { outcome } = await awaitScheduledTurn({ turnId: sent.turnId });
  return { sessionId, turnId: sent.turnId, outcome };
}
