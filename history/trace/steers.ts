/**
 * Messages sent to a turn while it ran (`harness send` to a busy session: the session hands them on
 * with its `steer` signal), read from the turn's history. Each is a `message` span under the turn,
 * placed before the step that read it: what was said, and whether it waited for that step
 * (`queue`) or cancelled the running step's calls (`interrupt`).
 */
import type { Run } from './runs';
import { makeSpan, type BuiltSpan, type TurnContext } from './types';

/** One message the turn was sent while it ran. */
export interface SteerItem {
  at: number;
  text: string;
  mode: 'queue' | 'interrupt';
}

/** The steer signals of a turn's runs, oldest first (one of another shape is not a message). */
export function readSteers(runs: readonly Run[]): SteerItem[] {
  const out: SteerItem[] = [];
  for (const run of runs) {
    for (const e of run.events) {
      if (e.kind !== 'signaled' || e.name !== 'steer') continue;
      const m = (e.input ?? {}) as { text?: unknown; mode?: unknown };
      if (typeof m.text === 'string') out.push({ at: e.at, text: m.text, mode: m.mode === 'interrupt' ? 'interrupt' : 'queue' });
    }
  }
  return out;
}

/** The turn's body with each message's span put before the first step that began after it. */
export function withSteerSpans(ctx: TurnContext, body: BuiltSpan[]): BuiltSpan[] {
  const steers = ctx.timeline.steers ?? [];
  if (!steers.length) return body;
  const out = [...body];
  steers.forEach((s, i) => {
    const span = makeSpan(ctx, `${ctx.turnId}/message/${i + 1}`, ctx.turnId, { type: 'message', name: 'message', start: s.at, end: s.at, status: 'ok', input: { text: s.text, mode: s.mode }, output: null, error: null });
    const next = out.findIndex((b) => b.span.type === 'step' && b.span.start !== null && Date.parse(b.span.start) > s.at);
    out.splice(next === -1 ? out.length : next, 0, { span });
  });
  return out;
}
