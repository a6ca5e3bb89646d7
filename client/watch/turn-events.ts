/**
 * A turn's history as typed events (turn started, step, model text, tool call, approval needed and
 * decided, tool result, question asked and answered, budget wait and decision, wait started and
 * ended, a sub-agent's waits, final), read with the trace's own code: the decoded events
 * (history/trace/events.ts) are read into the trace's timeline and spans after each history event,
 * and an event is given the first time its span (or the wait behind it) shows it. So an event
 * says no more and no less than `harness trace` would
 * have said at that point of the history, and where it came from is a position in the history:
 * reading the same history again gives the same events at the same positions, which is what lets a
 * client that lost its connection go on after the last event it saw.
 *
 * Pure: no Temporal here (follow-events.ts follows a turn's history and feeds it in).
 */
import type { BudgetScope, BudgetUnit } from '../../deterministic/budget';
import type { Risk } from '../../deterministic/types';
import { sessionOfTurnId } from '../../deterministic/turn-id';
import type { Run } from '../../history/trace/runs';
import { readTimeline, type Timeline } from '../../history/trace/timeline';
import { buildTurnSpans } from '../../history/trace/turn-spans';
import { approvalWait } from '../../history/trace/human-spans';
import { traceId, type Span } from '../../history/trace/types';
import type { TraceEvent } from '../../history/trace/events';
import type { BudgetDecidedEvent, EventBase, EventPosition, FinalEvent, HarnessEvent } from './event-types';
import { isMark, withCallMarks, type ReadItem } from './call-marks';
import { subAgentWaitDrafts } from './sub-agent-waits';
import { steered } from './steered-events';

/** An event without its position and turn (filled in by the reader). */
type Drafted<E> = E extends unknown ? Omit<E, keyof EventBase> : never;
type Draft = Drafted<HarnessEvent>;

/** Whether an event comes after a position: `from` a number is after every event of that offset. */
export function isAfter(e: EventPosition, from: number | EventPosition | undefined): boolean {
  if (from === undefined) return true;
  if (typeof from === 'number') return e.offset > from;
  return e.offset > from.offset || (e.offset === from.offset && e.seq > (from.seq ?? -1));
}

/**
 * Reads a turn's runs (as they grow: call read() again with the runs now) into its events, each
 * once. Every history event is read on its own, so the events do not depend on how the history
 * arrived (in one page or many).
 */
export class TurnEventReader {
  private readonly given = new Set<string>();
  private readonly sessionId: string;
  private readonly traceId: string;
  /** Decoded events read so far, per run. */
  private read_: number[] = [];
  private runIds: string[] = [];

  constructor(readonly turnId: string) {
    this.sessionId = sessionOfTurnId(turnId);
    this.traceId = traceId(this.sessionId);
  }

  /** Model calls by span id, as their marks said them (call-marks.ts). */
  private readonly calls = new Map<string, 'running' | 'ended'>();

  /** The events the runs tell past what was read before, in order. */
  read(runs: readonly Run[]): HarnessEvent[] {
    return this.readItems(runs).filter((i): i is HarnessEvent => !isMark(i));
  }

  /** As read(), with the marks of model calls seen running and ended among the events (call-marks.ts). */
  readItems(runs: readonly Run[]): ReadItem[] {
    const out: ReadItem[] = [];
    // A run read before that is not where it was: a reset (`harness retry`) replaced it.
    this.runIds.forEach((id, i) => {
      if (runs[i]?.runId !== id) throw new TurnReplaced(this.turnId);
    });
    let base = 0;
    for (const [r, run] of runs.entries()) {
      if (this.runIds[r] === undefined) this.runIds[r] = run.runId;
      let i = this.read_[r] ?? 0;
      while (i < run.events.length) {
        // The decoded events of one history event (a model call answered in a local activity is three).
        const id = run.events[i]!.id;
        let end = i + 1;
        while (end < run.events.length && run.events[end]!.id === id) end++;
        // A run's first events are what it carried over: the calls the run before it ended with
        // are told from there (the steps never span runs, and a run before that has nothing left
        // to tell), so each read takes at most two runs, however long the turn.
        const upTo = [...runs.slice(Math.max(0, r - 1), r), { ...run, events: run.events.slice(0, end) }];
        const last = run.events[end - 1]!;
        // An activity's start tells nothing an event carries (attempts are not events).
        if (run.events.slice(i, end).some((e) => e.kind !== 'activityStarted')) out.push(...this.at(upTo, base + id, last));
        i = end;
      }
      this.read_[r] = i;
      base += runLength(run);
    }
    return out;
  }

  /** The events that the history up to `upTo` tells first, at `offset`, with its model calls' marks. */
  private at(upTo: Run[], offset: number, last: TraceEvent): ReadItem[] {
    const t = readTimeline(upTo);
    const spans = buildTurnSpans(this.turnId, t, { traceId: this.traceId, sessionId: this.sessionId }).map((b) => b.span);
    const drafts = this.drafts(t, spans);
    // A message sent while the turn ran is its own history event (the session's steer signal).
    drafts.push(...steered(last, offset, this.given));
    const at = new Date(last.at).toISOString();
    return withCallMarks(this.calls, spans, drafts.map((d, seq) => ({ ...d, turnId: this.turnId, offset, seq, at }) as HarnessEvent), offset);
  }

  /** Each event not given before, in story order: a call's approval and question before its result, the turn's end last. */
  private drafts(t: Timeline, spans: readonly Span[]): Draft[] {
    const out: Draft[] = [];
    const give = (key: string, d: Draft | undefined) => {
      if (!d || this.given.has(key)) return;
      this.given.add(key);
      out.push(d);
    };
    const children = new Map<string, Span[]>();
    for (const s of spans) if (s.parent_id && (s.type === 'approval' || s.type === 'ask_user' || s.type === 'wait')) children.set(s.parent_id, [...(children.get(s.parent_id) ?? []), s]);
    let turn: Span | undefined;
    for (const s of spans) {
      const input = s.input as Record<string, unknown>;
      const output = (s.output ?? {}) as Record<string, unknown>;
      switch (s.type) {
        case 'turn':
          turn = s;
          give('turn', {
            type: 'turn_started',
            sessionId: s.session_id,
            turn: Number(input.turn),
            message: typeof input.user_message === 'string' ? input.user_message : null,
            ...(typeof input.model === 'string' ? { model: input.model } : {}),
          });
          break;
        case 'step':
          give(`step ${String(input.step)}`, { type: 'step', step: Number(input.step) });
          break;
        case 'llm_call':
          if (s.status === 'ok' && typeof output.content === 'string' && output.content !== '') {
            give(`text ${s.span_id}`, { type: 'model_text', step: Number(input.step), text: output.content });
          }
          break;
        case 'tool_call':
          this.call(t, s, children.get(s.span_id) ?? [], give);
          break;
        case 'budget':
          this.budget(s, spans, give);
          break;
      }
    }
    for (const w of subAgentWaitDrafts(t)) give(w.key, w.draft); // a sub-agent's waits, told to the session
    if (turn && turn.status !== 'running' && t.closed) give('final', final(t));
    return out;
  }

  /** A tool call: proposed, then what its approval and questions tell, then its result. */
  private call(t: Timeline, s: Span, under: readonly Span[], give: (key: string, d: Draft | undefined) => void): void {
    const input = s.input as { call_id?: string; step?: number; args?: unknown };
    const callId = String(input.call_id ?? '');
    const step = Number(input.step);
    give(`call ${callId}`, { type: 'tool_call', step, callId, tool: s.name, args: input.args, ...(s.source ? { source: s.source } : {}) });
    for (const c of under) {
      if (c.type === 'approval') this.approval(t, c, callId, give);
      else if (c.type === 'wait') sleep(c, callId, give);
      else this.question(t, c, callId, give);
    }
    if (s.output === null) return;
    const out = s.output as { ok?: unknown; result?: unknown; error_type?: unknown };
    const ok = out.ok === true;
    give(`result ${callId}`, {
      type: 'tool_result',
      step,
      callId,
      tool: s.name,
      ok,
      ...(out.result !== undefined ? { result: out.result } : {}),
      ...(!ok && s.error ? { error: s.error } : {}),
      ...(typeof out.error_type === 'string' ? { errorType: out.error_type } : {}),
    });
  }

  /**
   * An approval a person was asked for (the turn waited for it): a call the record says was
   * approved without asking (an eval's policy, a rerun's record) needed no one.
   */
  private approval(t: Timeline, s: Span, callId: string, give: (key: string, d: Draft | undefined) => void): void {
    if (!approvalWait(t, callId)) return;
    const input = s.input as { tool?: string; args?: unknown; risk?: Risk; reason?: string; rule?: string; digest?: string };
    const tool = String(input.tool ?? '');
    give(`approval ${callId}`, {
      type: 'approval_needed',
      callId,
      tool,
      ...(input.args !== undefined ? { args: input.args } : {}),
      ...(input.risk ? { risk: input.risk } : {}),
      ...(input.reason ? { reason: input.reason } : {}),
      ...(input.rule ? { rule: input.rule } : {}),
      ...(input.digest ? { digest: input.digest } : {}),
    });
    if (s.status === 'running' || !s.output) return;
    const o = s.output as { approved?: boolean; by?: string; reason?: string; always?: boolean; timed_out?: boolean; cancelled?: boolean; claimed?: boolean };
    // Closed with the turn and nothing decided: no decision to tell.
    if (o.approved === undefined && !o.timed_out && !o.cancelled) return;
    give(`decided ${callId}`, {
      type: 'approval_decided',
      callId,
      tool,
      approved: o.approved === true,
      ...(o.by ? { by: o.by } : {}),
      ...(o.reason ? { reason: o.reason } : {}),
      ...(o.always ? { always: true } : {}),
      ...(o.timed_out ? { timedOut: true } : {}),
      ...(o.cancelled ? { cancelled: true } : {}),
    });
  }

  /** A question (ask_user's, or an MCP server's during the call): asked once the turn waits for it. */
  private question(t: Timeline, s: Span, callId: string, give: (key: string, d: Draft | undefined) => void): void {
    const input = s.input as { key?: string; server?: string; question?: unknown };
    const questionId = input.key ?? callId;
    const waited = t.waits.some((w) => w.pending.kind === 'question' && w.pending.callId === questionId);
    if (!waited && s.status === 'running') return;
    const o = (s.output ?? {}) as { answer?: unknown; by?: string; timed_out?: boolean };
    // An ask_user call the workflow answered without asking (refused, or the turn ended first): no question.
    if (!waited && o.answer === undefined && !o.timed_out) return;
    give(`question ${questionId}`, {
      type: 'question_asked',
      questionId,
      callId,
      question: typeof input.question === 'string' ? input.question : JSON.stringify(input.question ?? null),
      ...(input.server ? { server: input.server } : {}),
    });
    if (s.status === 'running' || (o.answer === undefined && !o.timed_out)) return;
    give(`answered ${questionId}`, {
      type: 'question_answered',
      questionId,
      callId,
      ...(o.answer !== undefined ? { answer: typeof o.answer === 'string' ? o.answer : JSON.stringify(o.answer) } : {}),
      ...(o.by ? { by: o.by } : {}),
      ...(o.timed_out ? { timedOut: true } : {}),
    });
  }

  private budget(s: Span, spans: readonly Span[], give: (key: string, d: Draft | undefined) => void): void {
    const input = s.input as { scope: BudgetScope; unit: BudgetUnit; limit: number; spent: number; estimate: number };
    const step = Number((spans.find((p) => p.span_id === s.parent_id)?.input as { step?: number } | undefined)?.step);
    give(`budget ${s.span_id}`, { type: 'budget_wait', step, scope: input.scope, unit: input.unit, limit: input.limit, spent: input.spent, estimate: input.estimate });
    if (s.status === 'running' || !s.output) return;
    const o = s.output as { decision?: string; by?: string; raised_by?: number; reason?: string };
    if (o.decision === 'pending' || o.decision === undefined) return;
    give(`budget decided ${s.span_id}`, {
      type: 'budget_decided',
      step,
      decision: o.decision as BudgetDecidedEvent['decision'],
      ...(o.by ? { by: o.by } : {}),
      ...(o.raised_by !== undefined ? { raisedBy: o.raised_by } : {}),
      ...(o.reason ? { reason: o.reason } : {}),
    });
  }
}

/** A `wait` call's sleep: started, then ended (its time came, or someone woke it). */
function sleep(s: Span, callId: string, give: (key: string, d: Draft | undefined) => void): void {
  const input = s.input as { until?: string; reason?: string };
  give(`wait ${callId}`, { type: 'wait_started', callId, until: String(input.until ?? ''), reason: String(input.reason ?? '') });
  const o = s.output as { woken?: boolean; by?: string; reason?: string } | null;
  if (s.status !== 'ok' || !o) return;
  give(`woke ${callId}`, { type: 'wait_ended', callId, woken: o.woken === true, ...(o.by ? { by: o.by } : {}), ...(o.reason ? { reason: o.reason } : {}) });
}

/** A turn read before was replaced by a reset (`harness retry`): its positions no longer hold. */
export class TurnReplaced extends Error {
  constructor(readonly turnId: string) {
    super(`turn ${turnId} was reset (\`harness retry\`) while it was followed`);
  }
}

/** How the turn ended, from its close. */
function final(t: Timeline): Draft {
  const c = t.closed!;
  const r = c.result;
  const status: FinalEvent['status'] =
    c.status === 'completed' ? (r?.terminated_by === 'failed' ? 'failed' : r?.terminated_by === 'cancelled' ? 'cancelled' : 'completed') : c.status === 'canceled' ? 'cancelled' : (c.status as FinalEvent['status']);
  const error = r?.error ?? c.failure;
  return {
    type: 'final',
    status,
    ...(r ? { terminatedBy: r.terminated_by, answer: r.answer, steps: r.steps, usage: r.usage } : {}),
    ...(r?.output !== undefined ? { output: r.output } : {}),
    ...(error ? { error } : {}),
  };
}

/** How many events a run holds: a run before the last has closed, its close its last event. */
function runLength(run: Run): number {
  return run.events[run.events.length - 1]?.id ?? 0;
}
