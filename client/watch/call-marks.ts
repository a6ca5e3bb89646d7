/**
 * Where in a turn's events its model calls run: a mark when history first shows a call running
 * (after the events of that history event) and one when it shows the call ended (before them).
 * Between the two the call's text may stream (model-deltas.ts reads it). Marks are not events: a
 * reader of the same history finds the same marks at the same places, which is what gives a
 * streamed piece a position to resume from.
 */
import type { Span } from '../../history/trace/types';
import type { HarnessEvent } from './event-types';

/** A model call seen running, or seen ended after it was seen running. */
export interface CallMark {
  type: 'call_running' | 'call_ended';
  step: number;
  callIndex: number;
  /** The history event it was seen at. */
  offset: number;
  /** How many events that history event gave (the call's pieces are placed after them). */
  given: number;
}

/** An event, or a mark among them. */
export type ReadItem = HarnessEvent | CallMark;

/** Whether an item is a mark. */
export function isMark(item: ReadItem): item is CallMark {
  return item.type === 'call_running' || item.type === 'call_ended';
}

/**
 * The events of one history event with the marks of the model calls whose state it changed;
 * `seen` holds each call's state as the marks said it so far (by span id).
 */
export function withCallMarks(seen: Map<string, 'running' | 'ended'>, spans: readonly Span[], events: HarnessEvent[], offset: number): ReadItem[] {
  const ended: CallMark[] = [];
  const running: CallMark[] = [];
  for (const s of spans) {
    if (s.type !== 'llm_call' || typeof s.input.step !== 'number') continue;
    const call = { step: s.input.step, callIndex: Number(s.input.call_index ?? 0), offset, given: events.length };
    const state = seen.get(s.span_id);
    if (s.status === 'running' && state === undefined) {
      seen.set(s.span_id, 'running');
      running.push({ type: 'call_running', ...call });
    } else if (s.status !== 'running' && state !== 'ended') {
      // A call first seen ended (answered before history showed it running) has no mark.
      seen.set(s.span_id, 'ended');
      if (state === 'running') ended.push({ type: 'call_ended', ...call });
    }
  }
  return [...ended, ...events, ...running];
}
