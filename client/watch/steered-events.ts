/**
 * The `steered` event of a turn: a message sent to it while it ran (`harness send` to a busy
 * session), which the session hands on with its `steer` signal, its own history event.
 */
import type { TraceEvent } from '../../history/trace/events';
import type { SteeredEvent } from './event-types';

/** The event of a steer signal, once per history event (`given` remembers the offsets told). */
export function steered(last: TraceEvent, offset: number, given: Set<string>): Array<Omit<SteeredEvent, 'turnId' | 'offset' | 'seq' | 'at'>> {
  const m = (last.kind === 'signaled' && last.name === 'steer' ? last.input : undefined) as { text?: unknown; mode?: unknown } | undefined;
  if (typeof m?.text !== 'string' || given.has(`steer ${offset}`)) return [];
  given.add(`steer ${offset}`);
  return [{ type: 'steered', text: m.text, mode: m.mode === 'interrupt' ? 'interrupt' : 'queue' }];
}
