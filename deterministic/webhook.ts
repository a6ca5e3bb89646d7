/**
 * Webhooks: a signed JSON POST to a URL the worker's owner declared, when a turn waits for an
 * approval, an answer or a budget decision, and when it ends. The session's config names the URL
 * only; the secret that signs stays with the worker (its declaration names it: `env:NAME`), so it
 * never enters history. Each event has an id made of the turn, its kind and what it is about, the
 * same on every attempt and every replay, so a receiver dedupes on it. Pure: the workflow bundle uses it.
 */
import type { BudgetBreach } from './budget';
import type { PendingApproval } from './session-state';

/** What a session's config says of its webhook (the URL must be one its worker declared). */
export interface NotifyConfig {
  url: string;
  /** How long a delivery is retried before it is given up (default 1 hour). */
  retryWindowMs?: number;
  /** The first retry's delay; each next one doubles, up to `retryMaxIntervalMs` (defaults 1 s, 5 min). */
  retryInitialMs?: number;
  retryMaxIntervalMs?: number;
  /** The worker found the URL declared when the session started (each delivery checks again). */
  declared?: true;
}

/** A webhook as the worker's owner declares it: where, and the name of the secret that signs (`env:NAME`). */
export interface WebhookDeclaration {
  url: string;
  secret: string;
}

export const DEFAULT_WEBHOOK_RETRY = { windowMs: 60 * 60 * 1000, initialMs: 1_000, maxIntervalMs: 5 * 60 * 1000 } as const;

/** The kinds of events: a step's calls wait for approval, a question for an answer, a model call for a budget decision; the turn ended. */
export type WebhookKind = 'approval' | 'question' | 'budget' | 'turn_end';

/** One event, as the turn hands it to its delivery (the worker builds the body from it). */
export interface WebhookEvent {
  /** `<turnId>/<kind>/<first call id, question id, budget wait's key or 'end'>`: the same on every attempt. */
  eventId: string;
  kind: WebhookKind;
  sessionId: string;
  turnId: string;
  /** A sub-agent's turn: the agents from the session's down to it (its waits are decided by session, as the parent's). */
  agentPath?: string[];
  /** When it happened (ISO): the start of the delivery's workflow, which the turn starts as it happens. */
  occurredAt: string;
  calls?: PendingApproval[];
  question?: { callId: string; question: string };
  /** The budget the next model call would pass (its limit with every raise so far), before the step it waits in. */
  budget?: BudgetBreach & { step?: number };
  end?: { terminated_by: string; answer: string; steps: number };
}

/** A delivery: the event and where to (the activity's input, in history: no secret in it). */
export interface WebhookDelivery {
  url: string;
  event: WebhookEvent;
}

/** What a delivery's activity returns: the receiver's status and the attempt that got it through. */
export interface WebhookResult {
  eventId: string;
  status: number;
  attempts: number;
}

/**
 * The key of a budget wait among a turn's events: its step, budget and ceiling. A turn waits again
 * in the same step only after a raise too small, whose ceiling is higher, so each wait has its own.
 */
export function budgetEventKey(b: BudgetBreach & { step?: number }): string {
  return `step-${b.step ?? 0}-${b.scope}-${b.unit}-${b.limit}`;
}

/** The id of an event. */
export function webhookEventId(turnId: string, kind: WebhookKind, id: string): string {
  return `${turnId}/${kind}/${id}`;
}
