/**
 * Which history belongs to which tool call of a step. A call runs in the workflow (finish,
 * ask_user, remember, and every call decided before running: denied, invalid, unknown), as a
 * local activity (a marker without the call's id: matched by its result to the call's tool
 * message, else by the order it was scheduled in among the calls that can run locally) or as an
 * activity (whose input names the call).
 */
import { builtinRegistry } from '../../deterministic/builtin-tools';
import type { ToolOutcome } from '../../deterministic/activity-types';
import type { ToolCallRecord } from '../../deterministic/call-records';
import type { ToolCall } from '../../deterministic/types';
import { decisionOf } from './human-spans';
import { callGroups } from '../../deterministic/call-groups';
import type { Execution, LocalItem } from './timeline';
import type { TurnContext } from './types';

const REGISTRY = builtinRegistry();

/** Errors the workflow gives a call without running it. */
const DECIDED_IN_WORKFLOW = new Set(['INVALID_ARGUMENTS', 'UNKNOWN_TOOL', 'PERMISSION_DENIED', 'APPROVAL_DENIED', 'APPROVAL_TIMEOUT', 'REPEATED_ACTION']);

/** A call of the step with what history knows of it by its id. */
export interface CallView {
  call: ToolCall;
  id: string;
  index: number;
  record?: ToolCallRecord;
  /** The outcome as far as history knows it before matching executions (tool message or record). */
  known?: Outcome;
}

/** A tool's outcome as history shows it (error types of older releases included). */
export type Outcome = Omit<ToolOutcome, 'error_type'> & { error_type?: string };

/** The harness id of a call: the reply's own, or (turns from before the store) `t<turn>-s<step>-c<i>`. */
export function callId(ctx: TurnContext, call: ToolCall, step: number, index: number): string {
  const t = ctx.timeline;
  const named = (id: string) => t.records.has(id) || t.toolMessages.has(id) || t.activities.some((a) => a.input.callId === id);
  if (named(call.id)) return call.id;
  const harness = `t${ctx.turn}-s${step}-c${index}`;
  return named(harness) ? harness : call.id;
}

/**
 * Pairs each execution with its call: activities by the id in their input; a marker by the id of
 * the tool message its result is word for word (the workflow sends a local result on as it got
 * it); the other markers (failed attempts, results kept in the message store) by order.
 */
export function matchExecutions(ctx: TurnContext, views: CallView[], executions: readonly Execution[]): Map<string, Execution[]> {
  const out = new Map<string, Execution[]>();
  const add = (id: string, e: Execution) => out.set(id, [...(out.get(id) ?? []), e]);
  const owners = markerOwners(ctx, views, executions);
  const owned = new Set(owners.values());
  const ambiguous = orderAmbiguous(ctx, views, executions, owners, owned);
  let cursor = 0;
  for (const e of scheduleOrder(executions)) {
    if (e.kind === 'activity') {
      const id = String(e.item.input.callId ?? '');
      const index = views.findIndex((v) => v.id === id);
      add(id, e);
      if (index >= 0) cursor = Math.max(cursor, index + 1);
      continue;
    }
    const owner = owners.get(e);
    if (owner) {
      add(owner.id, e);
      cursor = Math.max(cursor, owner.index + 1);
      continue;
    }
    // The workflow starts a step's calls in the order the model gave them. A
    // call refused before running can carry the error a tool gives itself (INVALID_ARGUMENTS):
    // only its message, matched above when the tool did run, tells the two apart.
    const index = views.findIndex((v, i) => i >= cursor && !owned.has(v) && runsLocally(ctx, v));
    if (index < 0 || ambiguous) continue;
    add(views[index]!.id, e);
    cursor = index + 1;
  }
  return out;
}

/**
 * The executions with the markers in the order their local activities were scheduled (their
 * seq): calls that ran together were scheduled in call order but may have ended in any order,
 * and the markers are recorded as they ended. Each marker keeps the place of one marker.
 */
function scheduleOrder(executions: readonly Execution[]): Execution[] {
  const locals = executions.filter((e) => e.kind === 'local');
  if (locals.some((e) => e.item.seq === undefined)) return [...executions];
  const bySeq = [...locals].sort((a, b) => a.item.seq! - b.item.seq!);
  let next = 0;
  return executions.map((e) => (e.kind === 'local' ? bySeq[next++]! : e));
}

/** The call each marker answered, where its result is the text of that call's tool message (each message taken once, in order). */
function markerOwners(ctx: TurnContext, views: CallView[], executions: readonly Execution[]): Map<Execution, CallView> {
  const owners = new Map<Execution, CallView>();
  const taken = new Set<CallView>();
  for (const e of scheduleOrder(executions)) {
    if (e.kind !== 'local' || e.item.result === undefined) continue;
    const text = JSON.stringify(e.item.result);
    const v = views.find((c) => !taken.has(c) && ctx.timeline.toolMessages.get(c.id)?.content === text);
    if (!v) continue;
    owners.set(e, v);
    taken.add(v);
  }
  return owners;
}

/**
 * Whether matching the markers no tool message owns by order could pair a marker with the wrong
 * call: the step ran built-in reads together (call-groups.ts), and fewer of those markers are in
 * history than calls wait for one. Calls run together end in any order, so while some still run
 * (a live view, events read as history grows) the first marker may be the second call's; the
 * calls stay pending until every one of them has its marker, which the schedule order then pairs.
 */
function orderAmbiguous(ctx: TurnContext, views: CallView[], executions: readonly Execution[], owners: Map<Execution, CallView>, owned: ReadonlySet<CallView>): boolean {
  const waiting = views.filter((v) => !owned.has(v) && runsLocally(ctx, v));
  const together = callGroups(waiting, (v) => REGISTRY.get(v.call.name)?.parallel === true).some((g) => g.length > 1);
  const unowned = executions.filter((e) => e.kind === 'local' && !owners.has(e)).length;
  return together && unowned < waiting.length;
}

/** Whether a call may have run as a local activity: a host-local or MCP tool the workflow did not decide itself. */
function runsLocally(ctx: TurnContext, v: CallView): boolean {
  const name = v.call.name;
  if (!(REGISTRY.get(name)?.runsIn === 'local_activity' || name.startsWith('mcp__'))) return false;
  const k = v.known;
  if (k && !k.ok && k.error_type && DECIDED_IN_WORKFLOW.has(k.error_type)) return false;
  if (k && !k.ok && k.error_type === 'MCP_SERVER_UNAVAILABLE' && /^The MCP server /.test(k.message ?? '')) return false;
  if (v.record?.policy?.decision === 'deny') return false;
  const decision = decisionOf(ctx.timeline, v.id);
  return !(decision && decision.update.args && (decision.update.args as { approve?: boolean }).approve === false);
}

/** When the execution after `e` in its step started (a bound on when `e` ended). */
export function nextStart(executions: readonly Execution[], e: Execution): number | undefined {
  const next = executions[executions.indexOf(e) + 1];
  return next ? (next.kind === 'activity' ? next.item.scheduledAt : (next.item.scheduledAt ?? next.item.at)) : undefined;
}

/**
 * When a local activity ended: its marker's completion time, unless that is before its schedule
 * time (the two come from different clocks); then the next execution's start, or the marker.
 */
export function localEnd(item: LocalItem, next: number | undefined): number {
  const start = item.scheduledAt ?? item.at;
  if (item.completedAt !== undefined && item.completedAt >= start) return item.completedAt;
  return Math.max(start, Math.min(item.at, next ?? item.at));
}

