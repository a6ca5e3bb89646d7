/**
 * Delivers a webhook event (deterministic/webhook.ts): the body built here from what the turn
 * handed on, every argument of every call as the approval views show it (machine/call-view.ts:
 * escaped, a long one cut with its size), signed with HMAC-SHA256 under the secret the worker's
 * declaration names, and POSTed once per attempt. Only a URL the worker declared is posted to,
 * checked again on every attempt (a session input cannot name another); redirects are not
 * followed. A 2xx ends the delivery; a network failure, 408, 429 or 5xx is retried by the
 * activity's retry policy (the same event id on every attempt, so a receiver dedupes); any other
 * answer is permanent.
 */
import { createHmac } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { callView } from '../machine/call-view';
import { escapeForTerminal } from '../machine/terminal/escape';
import { budgetLine } from '../deterministic/budget';
import type { NotifyConfig, WebhookDelivery, WebhookEvent, WebhookResult } from '../deterministic/webhook';
import type { WorkerDeclarations } from './declarations';

/** How long one attempt may take before it counts as failed and is retried. */
const ATTEMPT_TIMEOUT_MS = 10_000;
/** Most characters of a turn's answer the turn-end event carries (the rest: `harness show`). */
const ANSWER_MAX = 2_000;

/** The headers a receiver reads. */
export const SIGNATURE_HEADER = 'x-harness-signature';
export const EVENT_ID_HEADER = 'x-harness-event-id';
export const TIMESTAMP_HEADER = 'x-harness-timestamp';

/** `sha256=<hex>` of the raw body under the secret: what the signature header carries. */
export function webhookSignature(secret: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex')}`;
}

/** The JSON body of an event: the ids to decide with and what an approver must see. */
export function webhookBody(event: WebhookEvent): Record<string, unknown> {
  const base = {
    event_id: event.eventId,
    kind: event.kind,
    session_id: event.sessionId,
    turn_id: event.turnId,
    ...(event.agentPath ? { agent_path: event.agentPath } : {}),
    occurred_at: event.occurredAt,
  };
  if (event.kind === 'approval') {
    return {
      ...base,
      calls: (event.calls ?? []).map((c) => {
        const v = callView(c.args);
        return {
          call_id: c.callId,
          tool: escapeForTerminal(c.tool),
          digest: c.digest ?? null,
          risk: c.risk,
          reason: escapeForTerminal(c.reason),
          ...(c.rule ? { rule: escapeForTerminal(c.rule) } : {}),
          ...(v.headline !== undefined ? { command: v.headline } : {}),
          args: v.args.map((a) => ({ name: a.name, value: a.text, clipped: a.clipped, ...(a.size ? { size: a.size } : {}) })),
        };
      }),
      decide: 'approve or deny each call with its call_id and digest (harness approve/deny, HarnessClient, the console)',
    };
  }
  if (event.kind === 'budget' && event.budget) {
    const { scope, unit, limit, spent, estimate, step } = event.budget;
    const example = unit === 'usd' ? '+$0.50' : '+5000';
    return {
      ...base,
      scope,
      unit,
      limit,
      spent,
      estimate,
      ...(step !== undefined ? { step } : {}),
      summary: budgetLine(event.budget),
      decide: `raise it in ${unit} (harness approve ${event.sessionId} --budget ${example}) or stop the turn (harness deny ${event.sessionId}); HarnessClient.decideBudget does either`,
    };
  }
  if (event.kind === 'question') {
    return { ...base, call_id: event.question?.callId, question: escapeForTerminal(event.question?.question ?? ''), decide: 'answer with the call_id (harness answer, HarnessClient, the console)' };
  }
  const answer = event.end?.answer ?? '';
  const chars = Array.from(answer);
  return {
    ...base,
    terminated_by: event.end?.terminated_by,
    steps: event.end?.steps,
    answer: escapeForTerminal(chars.length > ANSWER_MAX ? `${chars.slice(0, ANSWER_MAX).join('')}…` : answer),
    ...(chars.length > ANSWER_MAX ? { answer_size: `${chars.length} characters` } : {}),
  };
}

/** The webhook activities, checked against the worker's declarations and signed with secrets from its environment. */
export function createWebhookActivities(deps: { env: Record<string, string | undefined>; declarations: WorkerDeclarations }) {
  const secretOf = (url: string): string => {
    const declared = deps.declarations.webhook(url);
    const name = declared.secret.startsWith('env:') ? declared.secret.slice(4) : '';
    const value = name ? deps.env[name] : undefined;
    if (!value) throw ApplicationFailure.nonRetryable(`the webhook's secret ${declared.secret} is not set in the worker's environment`, 'WEBHOOK_SECRET_MISSING');
    return value;
  };
  return {
    /** A session that names a webhook, as it starts: its URL must be one the worker declared (NOT_DECLARED otherwise). */
    async checkNotify(input: { sessionId: string; notify: NotifyConfig }): Promise<NotifyConfig> {
      deps.declarations.webhook(input.notify.url);
      return { ...input.notify, declared: true };
    },

    /** One POST of one event (an attempt); its result says which attempt got a 2xx. */
    async deliverWebhook(input: WebhookDelivery): Promise<WebhookResult> {
      const secret = secretOf(input.url);
      const raw = JSON.stringify(webhookBody(input.event));
      const attempt = Context.current().info.attempt;
      let res: Response;
      try {
        res = await fetch(input.url, {
          method: 'POST',
          redirect: 'manual',
          signal: AbortSignal.any([AbortSignal.timeout(ATTEMPT_TIMEOUT_MS), Context.current().cancellationSignal]),
          headers: {
            'content-type': 'application/json',
            'user-agent': 'harness-webhook',
            [SIGNATURE_HEADER]: webhookSignature(secret, raw),
            [EVENT_ID_HEADER]: input.event.eventId,
            [TIMESTAMP_HEADER]: String(Math.floor(Date.now() / 1000)),
          },
          body: raw,
        });
      } catch (err) {
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        throw ApplicationFailure.retryable(`webhook not reached (attempt ${attempt}): ${cause?.code ?? cause?.message ?? (err as Error).message}`, 'WEBHOOK_UNREACHABLE');
      }
      await res.body?.cancel().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return { eventId: input.event.eventId, status: res.status, attempts: attempt };
      const why = `webhook answered ${res.status} (attempt ${attempt})`;
      if (res.status === 408 || res.status === 429 || res.status >= 500) throw ApplicationFailure.retryable(why, 'WEBHOOK_RETRY');
      // A redirect is not followed (it could point anywhere); a 4xx (a bad signature, an unknown event) will not change.
      throw ApplicationFailure.nonRetryable(why, 'WEBHOOK_REFUSED');
    },
  };
}
