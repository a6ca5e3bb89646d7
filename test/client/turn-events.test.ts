/**
 * A turn's events from its history (client/watch/turn-events.ts), on every stored turn history:
 * they do not depend on how the history arrived (whole, event by event, or in pages of any size),
 * a reader that goes on from any event gets exactly the events after it, and they tell what the
 * trace of the whole history tells (every call, its approval and its result).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { describe, expect, it } from 'vitest';
import { decodeEvents, type HistoryEvent } from '../../history/trace/events';
import type { Run } from '../../history/trace/runs';
import { readTimeline } from '../../history/trace/timeline';
import { buildTurnSpans } from '../../history/trace/turn-spans';
import { isAfter, TurnEventReader } from '../../client/watch/turn-events';
import type { HarnessEvent } from '../../client/watch/event-types';

const DIR = path.join(__dirname, '..', 'histories');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? files(full) : name.includes('.turn-') && name.endsWith('.json') ? [full] : [];
  });
}

/** The stored turns: `history-v0.12.turn-1.run2.json` is the second run of `history-v0.12/turn-1`; a run a reset replaced is left out, as fetchRuns does. */
function storedTurns(): Array<{ turnId: string; runs: Run[] }> {
  const byTurn = new Map<string, string[]>();
  for (const f of files(DIR).sort()) {
    const id = path.basename(f, '.json').replace(/\.run\d+$/, '').replace('.turn-', '/turn-').replace('.agent-', '/agent-');
    byTurn.set(id, [...(byTurn.get(id) ?? []), f]);
  }
  return [...byTurn].map(([turnId, list]) => {
    const runs: Run[] = [];
    for (const [i, f] of list.entries()) {
      const raw = (historyFromJSON(JSON.parse(readFileSync(f, 'utf8'))).events ?? []) as HistoryEvent[];
      if (raw.some((e) => e.workflowTaskFailedEventAttributes?.baseRunId)) runs.pop();
      runs.push({ workflowId: turnId, runId: `run-${i}`, workflowType: 'turnWorkflow', events: decodeEvents(raw) });
    }
    return { turnId, runs };
  });
}

/**
 * The runs as they were after `n` decoded events in all, and the rest of the history event the
 * n-th came from (a model call answered in a local activity decodes to three): history arrives
 * by whole events.
 */
function prefix(runs: readonly Run[], n: number): Run[] {
  const out: Run[] = [];
  let left = n;
  for (const r of runs) {
    if (left <= 0) break;
    let end = Math.min(left, r.events.length);
    while (end < r.events.length && r.events[end]!.id === r.events[end - 1]!.id) end++;
    out.push({ ...r, events: r.events.slice(0, end) });
    left -= r.events.length;
  }
  return out;
}

const total = (runs: readonly Run[]) => runs.reduce((n, r) => n + r.events.length, 0);

/** A small seeded random source, so a failing paging can be run again. */
function rng(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

const turns = storedTurns();
/** The newest release's turns and the others (relist), for the checks that read a history many times. */
const newest = turns.filter((t) => !/-v0\.(9|10|11)[-/]|eval-v[34]-/.test(t.turnId));

/** Each turn's events read whole, once. */
const read = new Map<string, HarnessEvent[]>();
function eventsOf(turnId: string, runs: readonly Run[]): HarnessEvent[] {
  if (!read.has(turnId)) read.set(turnId, new TurnEventReader(turnId).read(runs));
  return read.get(turnId)!;
}

describe('turn events from history', () => {
  it('has stored turns to read', () => {
    expect(turns.length).toBeGreaterThanOrEqual(10);
  });

  it.each(turns.map((t) => [t.turnId, t] as const))('%s: starts, ends once, and only moves forward', (_id, { turnId, runs }) => {
    const events = eventsOf(turnId, runs);
    expect(events[0]).toMatchObject({ type: 'turn_started', turnId, offset: 1, seq: 0 });
    expect(events.filter((e) => e.type === 'final')).toHaveLength(1);
    expect(events.at(-1)!.type).toBe('final');
    for (let i = 1; i < events.length; i++) expect(isAfter(events[i]!, events[i - 1]!), `${i}`).toBe(true);
    const keys = events.map((e) => `${e.offset}.${e.seq}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it.each(newest.map((t) => [t.turnId, t] as const))('%s: the same events whether the history comes whole, event by event or in pages, and from any event exactly those after it', (_id, { turnId, runs }) => {
    const whole = eventsOf(turnId, runs);
    const stepwise = new TurnEventReader(turnId);
    const oneByOne: HarnessEvent[] = [];
    for (let n = 1; n <= total(runs); n++) oneByOne.push(...stepwise.read(prefix(runs, n)));
    expect(oneByOne).toEqual(whole);
    // Another reader (a client that connected again), over the history as it came in pages of any size.
    const random = rng(turnId.length);
    const paged = new TurnEventReader(turnId);
    const again: HarnessEvent[] = [];
    for (let n = 0; n < total(runs); ) {
      n = Math.min(total(runs), n + 1 + Math.floor(random() * 12));
      again.push(...paged.read(prefix(runs, n)));
    }
    expect(again).toEqual(whole);
    for (const [i, e] of whole.entries()) {
      expect(again.filter((x) => isAfter(x, e)), `from event ${i}`).toEqual(whole.slice(i + 1));
      // From an offset: after every event of that history event.
      expect(again.filter((x) => isAfter(x, e.offset))).toEqual(whole.filter((x) => x.offset > e.offset));
    }
  });

  it.each(turns.map((t) => [t.turnId, t] as const))('%s: tells every call, approval, question and answer the trace of the whole history shows', (_id, { turnId, runs }) => {
    const events = eventsOf(turnId, runs);
    const sessionId = turnId.split('/')[0]!;
    const spans = buildTurnSpans(turnId, readTimeline(runs), { traceId: 't', sessionId }).map((b) => b.span);
    const of = <T extends HarnessEvent['type']>(type: T) => events.filter((e): e is Extract<HarnessEvent, { type: T }> => e.type === type);
    const calls = spans.filter((s) => s.type === 'tool_call');
    expect(of('tool_call').map((e) => e.callId)).toEqual(calls.map((s) => s.input.call_id));
    expect(of('tool_result').map((e) => e.callId).sort()).toEqual(calls.filter((s) => s.output !== null).map((s) => s.input.call_id as string).sort());
    for (const r of of('tool_result')) expect(r.ok).toBe(calls.find((s) => s.input.call_id === r.callId)!.status === 'ok');
    // The approvals a person was asked for (the turn waited: the span names what was shown), not those a record decided.
    const approvals = spans.filter((s) => s.type === 'approval' && 'args' in s.input);
    expect(of('approval_needed').map((e) => e.callId)).toEqual(approvals.map((s) => s.input.call_id));
    for (const d of of('approval_decided')) expect(approvals.find((s) => s.input.call_id === d.callId)!.output).toMatchObject({ approved: d.approved });
    expect(of('step').map((e) => e.step)).toEqual(spans.filter((s) => s.type === 'step').map((s) => s.input.step));
    expect(of('model_text').map((e) => e.text)).toEqual(spans.filter((s) => s.type === 'llm_call' && s.status === 'ok' && s.output?.content).map((s) => s.output!.content));
    const answered = spans.filter((s) => s.type === 'ask_user' && s.output && 'answer' in s.output);
    expect(of('question_answered').map((e) => e.answer)).toEqual(answered.map((s) => (typeof s.output!.answer === 'string' ? s.output!.answer : JSON.stringify(s.output!.answer))));
    // Each call is asked for before anything else is said of it, and its result comes last.
    for (const c of of('tool_call')) {
      const about = events.filter((e) => 'callId' in e && e.callId === c.callId);
      expect(about[0]).toBe(c);
      const result = about.findIndex((e) => e.type === 'tool_result');
      if (result >= 0) expect(result).toBe(about.length - 1);
    }
  });

  it("gives a structured output's object in the final event, as the turn's result holds it", () => {
    const done = newest.find((t) => t.runs[t.runs.length - 1]!.events.some((e) => e.kind === 'closed' && e.status === 'completed'))!;
    const output = { id: 'A-1', total: 3 };
    // The same history, its result as a turn of an agent with `output` closes with it.
    const runs = done.runs.map((r, i) =>
      i < done.runs.length - 1 ? r : { ...r, events: r.events.map((e) => (e.kind === 'closed' ? ({ ...e, result: { ...(e.result as object), output } } as typeof e) : e)) },
    );
    const final = new TurnEventReader(done.turnId).read(runs).find((e) => e.type === 'final');
    expect(final).toMatchObject({ type: 'final', status: 'completed', output });
    // Without one, the event has no output field.
    expect(eventsOf(done.turnId, done.runs).find((e) => e.type === 'final')).not.toHaveProperty('output');
  });
});
