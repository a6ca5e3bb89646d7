/**
 * The `wait` calls a turn slept in, read from its history: the turnStatus signal that names the
 * sleep (until when, why) begins one, the next one ends it; its timer firing means it slept the
 * whole time, a `wake` update that someone ended it (who: the update's identity; why: its reason).
 * A turn with no parent to tell (none of the harness's own) shows no sleep: its call's result says it.
 */
import type { Run } from './runs';
import type { CallView } from './call-matching';
import { iso, makeSpan, type Span, type SpanStatus, type TurnContext } from './types';

/** One sleep of the turn. */
export interface SleepItem {
  at: number;
  callId: string;
  until: string;
  reason: string;
  /** When the turn told its parent it runs again. */
  endedAt?: number;
  /** When its timer fired (nobody woke it). */
  firedAt?: number;
  /** The update that woke it: when, who (the client identity history keeps), and its arguments. */
  wake?: { at: number; identity: string; updateId: string; reason?: string; by?: string };
}

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' ? (v as Record<string, unknown>) : {});

/** The sleeps of a turn's runs, oldest first. */
export function readSleeps(runs: readonly Run[]): SleepItem[] {
  const sleeps: SleepItem[] = [];
  const open = () => (sleeps.at(-1)?.endedAt === undefined ? sleeps.at(-1) : undefined);
  for (const run of runs) {
    for (const e of run.events) {
      if (e.kind === 'signalSent' && e.name === 'turnStatus') {
        const o = open();
        if (o) o.endedAt = e.at;
        const s = obj(obj(e.input).sleeping);
        if (typeof s.callId === 'string') sleeps.push({ at: e.at, callId: s.callId, until: String(s.until ?? ''), reason: String(s.reason ?? '') });
      } else if (e.kind === 'timerFired') {
        const o = open();
        if (o && !o.wake) o.firedAt = e.at;
      } else if (e.kind === 'updateAccepted' && e.name === 'wake') {
        const o = open();
        const args = obj(e.args);
        if (o && !o.wake) {
          o.wake = {
            at: e.at,
            identity: e.identity,
            updateId: e.updateId,
            ...(typeof args.reason === 'string' && args.reason ? { reason: args.reason } : {}),
            ...(typeof args.by === 'string' && args.by ? { by: args.by } : {}),
          };
        }
      }
    }
  }
  return sleeps;
}

/**
 * The sleep of a `wait` call, as a span under the call: until when and why, then whether its time
 * came or who woke it (and why). None for a call that did not sleep (refused arguments).
 */
export function sleepSpan(ctx: TurnContext, callKey: string, v: CallView): { span: Span; end?: number } | undefined {
  const s = ctx.timeline.sleeps?.find((x) => x.callId === v.id);
  if (!s) return undefined;
  const end = s.wake?.at ?? s.firedAt ?? s.endedAt;
  const status: SpanStatus = end !== undefined ? 'ok' : ctx.running ? 'running' : 'error';
  const span = makeSpan(ctx, `${callKey}/wait`, callKey, {
    type: 'wait',
    name: 'wait',
    start: s.at,
    end,
    status,
    input: { call_id: v.id, until: s.until, reason: s.reason },
    output:
      status === 'running'
        ? null
        : {
            woken: s.wake !== undefined,
            ...(s.wake ? { by: s.wake.identity, at: iso(s.wake.at), update_id: s.wake.updateId, ...(s.wake.reason ? { reason: s.wake.reason } : {}) } : {}),
          },
    error: status === 'error' ? 'the turn ended while it slept' : null,
  });
  return { span, ...(end !== undefined ? { end } : {}) };
}
