/**
 * What background sub-agents of a session wait for, from its current run's history: the run's
 * carried children (continue-as-new) and the `backgroundStatus` signals since, less the children
 * whose end (`backgroundResult`) arrived. Each wait names the child turn it is decided at.
 */
import type { SessionInput } from '../deterministic/session';
import type { BackgroundChild, Pending } from '../deterministic/session-state';
import { decodePayload, type HistoryEvent } from '../history/trace/events';
import { eventIso } from './turn-record';

/** One background child's wait: its turn, what it waits for (with its path, `background`), since when. */
export interface BackgroundWait {
  turnId: string;
  pending: Pending;
  since: string;
}

export function backgroundWaits(events: readonly HistoryEvent[]): BackgroundWait[] {
  const waits = new Map<string, BackgroundWait | undefined>();
  const first = events[0];
  const input = decodePayload(first?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]) as SessionInput | undefined;
  for (const r of input?.carry?.background?.running ?? []) waits.set(r.turnId, r.pending ? { turnId: r.turnId, pending: r.pending, since: eventIso(first?.eventTime) } : undefined);
  for (const e of events) {
    const signal = e.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName !== 'backgroundStatus' && signal?.signalName !== 'backgroundResult') continue;
    const s = decodePayload(signal.input?.payloads?.[0]) as { turnId?: string; path?: string[]; pending?: Pending } | undefined;
    if (typeof s?.turnId !== 'string') continue;
    if (signal.signalName === 'backgroundResult' || !s.pending) {
      waits.delete(s.turnId);
      continue;
    }
    const had = waits.get(s.turnId);
    const pending: Pending = { ...s.pending, agent: { ...(s.pending.agent ?? { turnId: s.turnId, path: s.path ?? [] }), background: true } };
    // The same kind of wait signalled again (calls decided one by one) still waits since its first.
    waits.set(s.turnId, { turnId: s.turnId, pending, since: had && had.pending.kind === pending.kind ? had.since : eventIso(e.eventTime) });
  }
  return [...waits.values()].filter((w): w is BackgroundWait => w !== undefined);
}

/**
 * The background children of a session still running, from its current run's history: the
 * carried ones and those that said they run since, less those whose end arrived; `waiting` when
 * the last status a child sent was a wait on a person.
 */
export function backgroundRunning(events: readonly HistoryEvent[]): BackgroundChild[] {
  const running = new Map<string, BackgroundChild>();
  const ended = new Set<string>();
  const input = decodePayload(events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]) as SessionInput | undefined;
  for (const r of input?.carry?.background?.running ?? []) running.set(r.turnId, { turnId: r.turnId, path: r.path, ...(r.pending ? { waiting: true as const } : {}) });
  for (const e of events) {
    const signal = e.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName !== 'backgroundStatus' && signal?.signalName !== 'backgroundResult') continue;
    const s = decodePayload(signal.input?.payloads?.[0]) as { turnId?: string; path?: string[]; pending?: Pending } | undefined;
    if (typeof s?.turnId !== 'string' || ended.has(s.turnId)) continue;
    if (signal.signalName === 'backgroundResult') {
      ended.add(s.turnId);
      running.delete(s.turnId);
    } else running.set(s.turnId, { turnId: s.turnId, path: s.path ?? [], ...(s.pending ? { waiting: true as const } : {}) });
  }
  return [...running.values()];
}
