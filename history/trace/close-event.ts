/** Telling the event that closes a workflow run. */
import type { HistoryEvent } from './events';

/** Whether the event closes its run (completed, failed, timed out, cancelled, terminated, continued as new). */
export function isCloseEvent(e: HistoryEvent): boolean {
  return Boolean(
    e.workflowExecutionCompletedEventAttributes ||
      e.workflowExecutionFailedEventAttributes ||
      e.workflowExecutionTimedOutEventAttributes ||
      e.workflowExecutionCanceledEventAttributes ||
      e.workflowExecutionTerminatedEventAttributes ||
      e.workflowExecutionContinuedAsNewEventAttributes,
  );
}
