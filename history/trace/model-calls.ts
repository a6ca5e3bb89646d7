/** A model call across its activities: a hand-off and what went on from it are one call, timed from its request. */
import type { ActivityItem } from './timeline';

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});

/**
 * A model call's activity as the whole call, whose request may have begun before it: a call a
 * local activity handed on, or tried first there, starts with that local attempt (`localStart`),
 * else the trace would give its first seconds to whatever ran before it. And a hand-off whose
 * worker was gone before it took the activity (workflows/turn/model-call.ts), an activity that failed
 * and the one that sent the call again counting on from it, is one call: the first leaves the list.
 */
export function continueModelCall(activities: ActivityItem[], item: ActivityItem, localStart: number | undefined): void {
  if (!item.input.adopt && !item.input.earlier) return;
  if (localStart !== undefined) item.scheduledAt = Math.min(item.scheduledAt, localStart);
  if (!item.input.earlier) return;
  let i = activities.length - 1;
  while (i >= 0 && activities[i]!.type !== 'callModel') i--;
  const lost = activities[i];
  if (!lost || lost.step !== item.step || !lost.input.adopt || lost.failure === undefined || lost.canceled) return;
  activities.splice(i, 1);
  item.scheduledAt = Math.min(item.scheduledAt, lost.scheduledAt);
  // What became of the hand-off, as the workflow put it (it was no local attempt that failed).
  const why = (item.input.earlier as { failure?: unknown }).failure;
  if (typeof why === 'string' && why) item.lastFailure = why;
}

/** The attempts a failed model call says it took (its failure's details), over the count its start events give. */
export function reportedAttempt(details: unknown): { attempt?: number } {
  const n = obj(details).attempt;
  return typeof n === 'number' && n >= 1 ? { attempt: n } : {};
}
