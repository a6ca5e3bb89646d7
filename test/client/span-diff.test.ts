import { describe, expect, it } from 'vitest';
import { SpanDiff } from '../../client/watch/live';
import type { Span } from '../../history/trace/types';

function span(id: string, parent: string | null, status: Span['status'], type: Span['type'] = 'step'): Span {
  return { trace_id: 't', session_id: 's', span_id: id, parent_id: parent, type, name: id, start: '2026-12-06T00:00:00Z', end: status === 'running' ? null : '2026-12-06T00:00:01Z', duration_ms: status === 'running' ? null : 1000, status, input: {}, output: null, error: null };
}

/** A turn in story order (parent before children): turn, step 1 (model, tool), step 2 (model). */
function turn(states: Record<string, Span['status']>): Span[] {
  return [
    span('turn', null, states.turn ?? 'running', 'turn'),
    span('s1', 'turn', states.s1 ?? 'running'),
    span('s1/model', 's1', states['s1/model'] ?? 'running', 'llm_call'),
    span('s1/tool', 's1', states['s1/tool'] ?? 'running', 'tool_call'),
    span('s2', 'turn', states.s2 ?? 'running'),
    span('s2/model', 's2', states.s2model ?? 'running', 'llm_call'),
  ];
}

const lines = (changes: ReturnType<SpanDiff['diff']>) => changes.map((c) => `${c.change} ${c.span.span_id}`);

describe('SpanDiff', () => {
  it('reports a close after the changes under it when a whole step and the turn end in one batch', () => {
    const diff = new SpanDiff();
    expect(lines(diff.diff(turn({})))).toEqual(['opened turn', 'opened s1', 'opened s1/model', 'opened s1/tool', 'opened s2', 'opened s2/model']);
    const all = { turn: 'ok', s1: 'ok', 's1/model': 'ok', 's1/tool': 'ok', s2: 'ok', s2model: 'ok' } as const;
    expect(lines(diff.diff(turn(all)))).toEqual(['closed s1/model', 'closed s1/tool', 'closed s1', 'closed s2/model', 'closed s2', 'closed turn']);
    expect(diff.diff(turn(all))).toEqual([]);
  });

  it('reports a span first seen closed as opened before the changes under it, so a parent always comes first', () => {
    const diff = new SpanDiff();
    const all = { turn: 'ok', s1: 'ok', 's1/model': 'ok', 's1/tool': 'ok', s2: 'ok', s2model: 'ok' } as const;
    const changes = diff.diff(turn(all));
    expect(lines(changes)).toEqual(['opened turn', 'opened s1', 'closed s1/model', 'closed s1/tool', 'closed s1', 'opened s2', 'closed s2/model', 'closed s2', 'closed turn']);
    // Each span is reported before anything under it, and its close after.
    const at = (line: string) => lines(changes).indexOf(line);
    for (const s of turn(all)) {
      if (!s.parent_id) continue;
      expect(at(`opened ${s.parent_id}`), s.span_id).toBeLessThan(lines(changes).findIndex((l) => l.endsWith(` ${s.span_id}`)));
    }
    // The opening is the span as it ran; its close carries the outcome.
    const opened = changes.find((c) => c.change === 'opened' && c.span.span_id === 'turn')!.span;
    expect(opened).toMatchObject({ status: 'running', end: null, duration_ms: null, output: null });
    expect(changes.at(-1)!.span.status).toBe('ok');
    // A leaf first seen closed (an approval decided at once) is only closed: no "waiting" line for it.
    const leaf = new SpanDiff(turn({}));
    expect(lines(leaf.diff(turn({ 's1/tool': 'ok' })))).toEqual(['closed s1/tool']);
  });

  it('keeps story order for spans that open while others close, and for a lone close', () => {
    const diff = new SpanDiff(turn({}).slice(0, 4));
    // Step 1 ends and step 2 begins in the same batch: step 1's close comes before step 2 opens.
    expect(lines(diff.diff(turn({ s1: 'ok', 's1/model': 'ok', 's1/tool': 'error' })))).toEqual(['closed s1/model', 'closed s1/tool', 'closed s1', 'opened s2', 'opened s2/model']);
    expect(lines(diff.diff(turn({ s1: 'ok', 's1/model': 'ok', 's1/tool': 'error', s2model: 'ok' })))).toEqual(['closed s2/model']);
  });
});
