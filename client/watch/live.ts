/**
 * A turn or a session as it happens: its history followed (follow.ts), rebuilt into the trace's
 * spans after each batch of new events, and each span reported when it opens, changes while it
 * runs, and closes. The live lines of the CLI, `status --follow`, `trace --follow` and the
 * console all read these changes, so what they show is what `harness trace` shows afterwards.
 */
import type { Client } from '@temporalio/client';
import { HistoryFollower } from './follow';
import { TurnTree } from './turn-tree';
import { readTimeline } from '../../history/trace/timeline';
import { buildTurnSpans } from '../../history/trace/turn-spans';
import { addCosts } from '../../history/trace/cost-spans';
import { turnLedger } from '../../history/ledger/compute';
import { traceId, type BuiltSpan, type Span } from '../../history/trace/types';
import type { Run } from '../../history/trace/runs';
import type { Trouble } from '../wait-progress';
import { sessionOfTurnId } from '../../deterministic/turn-id';

/** A span that opened (seen running), changed while running, or closed (seen ended). */
export interface SpanChange {
  change: 'opened' | 'updated' | 'closed';
  span: Span;
  /** The turn the span belongs to (watchTurn and watchSession set it). */
  turnId?: string;
  /** The sub-agent whose child turn the span is of, under one of the turn's calls (absent: the turn's own). */
  agent?: string;
}

/** What a watch reports, and how it stops. */
export interface WatchOptions {
  signal?: AbortSignal;
  onChange: (c: SpanChange) => void;
  onTrouble?: (t: Trouble | undefined) => void;
  /** Spans already shown (a trace printed first): reported again only when they change. */
  known?: readonly Span[];
  /** Report nothing of what happened before the watch began, only what changes after. */
  fromNow?: boolean;
}

/** Remembers each span's state and tells what changed between two builds. */
export class SpanDiff {
  private readonly seen = new Map<string, string>();

  constructor(known: readonly Span[] = []) {
    this.prime(known);
  }

  /** Takes spans as seen without reporting them. */
  prime(spans: readonly Span[]): void {
    for (const s of spans) this.seen.set(s.span_id, stateOf(s));
  }

  /**
   * The changes from what was seen to `spans`, in story order (a parent before its children),
   * except that a span's close comes after every change under it: one batch can hold a whole
   * step and the turn's end (quick steps share a workflow task), and "turn ended" must be the
   * last line a watcher prints. A span first seen already closed, with changes under it, is
   * reported opened first (as it was while it ran), so that a consumer always meets a parent
   * before its children (the console nests each span under its parent as it arrives).
   */
  diff(spans: readonly Span[]): SpanChange[] {
    const changes: SpanChange[] = [];
    const fresh = new Set<string>();
    for (const s of spans) {
      const before = this.seen.get(s.span_id);
      const now = stateOf(s);
      if (before === now) continue;
      this.seen.set(s.span_id, now);
      if (before === undefined) fresh.add(s.span_id);
      if (s.status !== 'running') changes.push({ change: 'closed', span: s });
      else changes.push({ change: before === undefined ? 'opened' : 'updated', span: s });
    }
    return closesLast(changes, spans, fresh);
  }
}

/**
 * Reorders changes in story order so that each close follows the changes of its span's
 * descendants: a close waits on a stack until a change outside its subtree comes. When a change
 * under a waiting close comes and that span is new in this batch, it is reported opened first.
 */
function closesLast(changes: readonly SpanChange[], spans: readonly Span[], fresh: ReadonlySet<string>): SpanChange[] {
  const parent = new Map(spans.map((s) => [s.span_id, s.parent_id]));
  const within = (id: string, ancestor: string): boolean => {
    for (let p = parent.get(id); p; p = parent.get(p)) if (p === ancestor) return true;
    return false;
  };
  const out: SpanChange[] = [];
  const waiting: SpanChange[] = [];
  const announced = new Set<string>();
  for (const c of changes) {
    while (waiting.length && !within(c.span.span_id, waiting[waiting.length - 1]!.span.span_id)) out.push(waiting.pop()!);
    // Every waiting close is an ancestor of this change, outermost first.
    for (const w of waiting) {
      const id = w.span.span_id;
      if (fresh.has(id) && !announced.has(id)) {
        announced.add(id);
        out.push({ change: 'opened', span: whileRunning(w.span) });
      }
    }
    if (c.change === 'closed') waiting.push(c);
    else out.push(c);
  }
  while (waiting.length) out.push(waiting.pop()!);
  return out;
}

/** A closed span as it was while it ran: no end, no output yet. */
function whileRunning(s: Span): Span {
  return { ...s, status: 'running', end: null, duration_ms: null, output: null, error: null };
}

/** A span's state for the diff: its status, end and output. */
function stateOf(s: Span): string {
  return `${s.status}|${s.end ?? ''}|${JSON.stringify(s.output)}`;
}

/** The spans of a turn from its runs, as `harness trace` builds them (costs included). */
export function liveTurnSpans(turnId: string, runs: readonly Run[], sessionId: string): BuiltSpan[] {
  const timeline = readTimeline(runs);
  const spans = buildTurnSpans(turnId, timeline, { traceId: traceId(sessionId), sessionId });
  addCosts(spans, turnLedger(turnId, timeline));
  return spans;
}

/** Follows a turn until it closes (or `signal` aborts); false when Temporal does not know it. */
export async function watchTurn(client: Client, turnId: string, o: WatchOptions, diff = new SpanDiff(o.known)): Promise<boolean> {
  const sessionId = sessionOfTurnId(turnId);
  // The turn with its sub-agents' turns, each child's spans under the call that started it.
  const tree = new TurnTree(client, turnId, (id, runs) => liveTurnSpans(id, runs, sessionId), o.onTrouble);
  if (!(await tree.load(o.signal))) return false;
  const build = async () => (await tree.spans()).map((b) => b.span);
  const report = (changes: SpanChange[]) => {
    const agents = tree.agents();
    for (const c of changes) {
      const agent = agents.get(c.span.span_id);
      o.onChange({ ...c, turnId, ...(agent ? { agent } : {}) });
    }
  };
  if (o.fromNow) diff.prime(await build());
  for (;;) {
    report(diff.diff(await build()));
    if (tree.closed || (await tree.next(o.signal)) === 'closed') {
      report(diff.diff(await build()));
      return true;
    }
  }
}

/** The turn ids a session's runs started, in order. */
export function turnsOf(runs: readonly Run[]): string[] {
  const ids: string[] = [];
  for (const r of runs) for (const e of r.events) if (e.kind === 'childStarted' && !ids.includes(e.workflowId)) ids.push(e.workflowId);
  return ids;
}

/**
 * Follows a session: its turns one after another as it starts them, each watched until it
 * closes, until the session closes (or `signal` aborts). False when Temporal does not know it.
 */
export async function watchSession(client: Client, sessionId: string, o: WatchOptions): Promise<boolean> {
  const follower = new HistoryFollower(client, sessionId, o.onTrouble);
  if (!(await follower.load(o.signal))) return false;
  const diff = new SpanDiff(o.known);
  const watched = new Set<string>();
  // Turns that closed before the watch began are history: only the open one is followed.
  const before = turnsOf(follower.current());
  const skip = new Set(o.fromNow || o.known ? before.slice(0, -1) : []);
  for (;;) {
    for (const turnId of turnsOf(follower.current())) {
      if (watched.has(turnId) || skip.has(turnId)) continue;
      watched.add(turnId);
      const fromNow = Boolean(o.fromNow) && before.includes(turnId);
      await watchTurn(client, turnId, { ...o, fromNow }, diff);
    }
    if (follower.closed) return true;
    // Between turns: the session's next event (a message, an end) is awaited.
    if ((await follower.next(o.signal)) === 'closed' && turnsOf(follower.current()).every((t) => watched.has(t) || skip.has(t))) return true;
  }
}
