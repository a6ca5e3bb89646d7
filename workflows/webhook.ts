/**
 * webhookWorkflow: delivers one webhook event, retried with backoff for its retry window. A turn
 * starts it as a child it does not wait for (and abandons when it closes), so a receiver that is
 * down never holds up the wait on a person or the turn's result. Its workflow id is the event's
 * id: a turn run again (a retry, a replay) cannot start a second delivery of the same event, and
 * its history holds the delivery's input, each attempt's failure and the receiver's status.
 */
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import { DEFAULT_WEBHOOK_RETRY, type NotifyConfig, type WebhookDelivery, type WebhookResult } from '../deterministic/webhook';
import type { Activities } from './activity-options';

/** Delivers the event or fails once its retry window is used up (or the receiver refuses it for good). */
export async function webhookWorkflow(input: { delivery: WebhookDelivery; retry: Pick<NotifyConfig, 'retryWindowMs' | 'retryInitialMs' | 'retryMaxIntervalMs'> }): Promise<WebhookResult> {
  const window = input.retry.retryWindowMs ?? DEFAULT_WEBHOOK_RETRY.windowMs;
  const { deliverWebhook } = proxyActivities<Activities>({
    scheduleToCloseTimeout: window,
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: input.retry.retryInitialMs ?? DEFAULT_WEBHOOK_RETRY.initialMs,
      backoffCoefficient: 2,
      maximumInterval: input.retry.retryMaxIntervalMs ?? DEFAULT_WEBHOOK_RETRY.maxIntervalMs,
      nonRetryableErrorTypes: ['NOT_DECLARED', 'WEBHOOK_SECRET_MISSING', 'WEBHOOK_REFUSED'],
    },
  });
  const { delivery } = input;
  return deliverWebhook({ ...delivery, event: { ...delivery.event, occurredAt: workflowInfo().startTime.toISOString() } });
}
