/**
 * The tool calls of one step, as spans: what the model asked for (its reply), how the policy
 * judged each call, the approval and question spans under it, and what came back. A call runs
 * in the workflow (finish, ask_user, remember, and every call decided before running: denied,
 * invalid, unknown), as a local activity (a marker without the call's id: matched by order among
 * the calls that can run locally) or as an activity (whose input names the call).
 */
import { builtinRegistry } from '../../common/builtin-tools';
import { ranLocally } from './local-policy';
import type { ToolOutcome } from '../../common/activity-types';
import type { ApprovalRecord, PendingApproval, PolicyRecord, ToolCallRecord } from '../../common/session';
import type { ToolCall } from '../../common/types';
import type { Execution, LocalItem, Timeline, UpdateItem, Wait } from './timeline';
import { iso, makeSpan, type BuiltSpan, type Span, type SpanStatus, type TurnContext } from './types';

const REGISTRY = builtinRegistry();

/** Errors the workflow gives a call without running it. */
const DECIDED_IN_WORKFLOW = new Set(['INVALID_ARGUMENTS', 'UNKNOWN_TOOL', 'PERMISSION_DENIED', 'APPROVAL_DENIED', 'APPROVAL_TIMEOUT', 'REPEATED_ACTION']);

/** `local`, `skill`, `mcp:<server>` (tools named `mcp__<server>__<tool>`); custom tools are known by their execution. */
export function toolSource(name: string): string | undefined {
  if (name.startsWith('mcp__')) return `mcp:${name.slice(5).split('__')[0]}`;
  return REGISTRY.get(name)?.source;
}

/** A call's arguments as a value (the model sends a JSON string; a malformed one stays a string). */
export function parseArgs(text: string): unknown {
  try {
    return text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return text;
  }
}

interface CallView {
  call: ToolCall;
  id: string;
  index: number;
  record?: ToolCallRecord;
  /** The outcome as far as history knows it before matching executions (tool message or record). */
  known?: Outcome;
}

/** A tool's outcome as history shows it (error types of older releases included). */
type Outcome = Omit<ToolOutcome, 'error_type'> & { error_type?: string };

/** Builds the tool_call spans (with their approval and ask_user children) of a step. */
export function callSpans(ctx: TurnContext, step: number, stepKey: string, calls: readonly ToolCall[], askedAt: number | undefined): BuiltSpan[] {
  const t = ctx.timeline;
  const views: CallView[] = calls.map((call, index) => {
    const id = callId(ctx, call, step, index);
    const record = t.records.get(id);
    const message = t.toolMessages.get(id);
    const fromMessage = message ? (parseArgs(message.content) as Outcome) : undefined;
    const known = fromMessage && typeof fromMessage === 'object' ? fromMessage : record ? { ok: record.ok, ...(record.error_type ? { error_type: record.error_type } : {}) } : undefined;
    return { call, id, index, ...(record ? { record } : {}), ...(known ? { known } : {}) };
  });
  const stepExecutions = t.executions.get(step) ?? [];
  const executions = matchExecutions(ctx, views, stepExecutions);
  const out: BuiltSpan[] = [];
  for (const v of views) out.push(...oneCall(ctx, step, stepKey, v, executions.get(v.id) ?? [], askedAt, (e) => nextStart(stepExecutions, e)));
  return out;
}

/** The harness id of a call: the reply's own, or (turns from before the store) `t<turn>-s<step>-c<i>`. */
function callId(ctx: TurnContext, call: ToolCall, step: number, index: number): string {
  const t = ctx.timeline;
  const named = (id: string) => t.records.has(id) || t.toolMessages.has(id) || t.activities.some((a) => a.input.callId === id);
  if (named(call.id)) return call.id;
  const harness = `t${ctx.turn}-s${step}-c${index}`;
  return named(harness) ? harness : call.id;
}

/** Pairs each execution with its call: activities by the id in their input, markers by order. */
function matchExecutions(ctx: TurnContext, views: CallView[], executions: readonly Execution[]): Map<string, Execution[]> {
  const out = new Map<string, Execution[]>();
  const add = (id: string, e: Execution) => out.set(id, [...(out.get(id) ?? []), e]);
  let cursor = 0;
  for (const e of executions) {
    if (e.kind === 'activity') {
      const id = String(e.item.input.callId ?? '');
      const index = views.findIndex((v) => v.id === id);
      add(id, e);
      if (index >= 0) cursor = Math.max(cursor, index + 1);
      continue;
    }
    // The workflow runs a step's calls one after another, in the order the model gave them.
    const index = views.findIndex((v, i) => i >= cursor && runsLocally(ctx, v));
    if (index < 0) continue;
    add(views[index]!.id, e);
    cursor = index + 1;
  }
  return out;
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

/** The first wait that asked a human about this call. */
function approvalWait(t: Timeline, id: string): Wait | undefined {
  return t.waits.find((w) => w.pending.kind === 'approvals' && w.pending.calls.some((c) => c.callId === id));
}

/** The decideApprovals update that decided this call, if any. */
function decisionOf(t: Timeline, id: string): { update: UpdateItem } | undefined {
  for (const u of t.updates) {
    if (u.name !== 'decideApprovals' || u.failure !== undefined) continue;
    if (decidedIds(t, u).includes(id)) return { update: u };
  }
  return undefined;
}

function decidedIds(t: Timeline, u: UpdateItem): string[] {
  const result = u.result as { decided?: unknown } | undefined;
  if (Array.isArray(result?.decided)) return result.decided.map(String);
  const args = (u.args ?? {}) as { calls?: { callId?: string }[]; callIds?: string[] };
  if (args.calls?.length) return args.calls.map((c) => String(c.callId));
  if (args.callIds?.length) return args.callIds.map(String);
  // "All pending" from clients of old: the calls of the wait open at that time.
  const w = [...t.waits].reverse().find((x) => x.at <= u.at && x.pending.kind === 'approvals');
  return w?.pending.kind === 'approvals' ? w.pending.calls.map((c) => c.callId) : [];
}

/** When the execution after `e` in its step started (a bound on when `e` ended). */
function nextStart(executions: readonly Execution[], e: Execution): number | undefined {
  const next = executions[executions.indexOf(e) + 1];
  return next ? (next.kind === 'activity' ? next.item.scheduledAt : (next.item.scheduledAt ?? next.item.at)) : undefined;
}

/**
 * When a local activity ended: its marker's completion time, unless that is before its schedule
 * time (the two come from different clocks); then the next execution's start, or the marker.
 */
function localEnd(item: LocalItem, next: number | undefined): number {
  const start = item.scheduledAt ?? item.at;
  if (item.completedAt !== undefined && item.completedAt >= start) return item.completedAt;
  return Math.max(start, Math.min(item.at, next ?? item.at));
}

function oneCall(
  ctx: TurnContext,
  step: number,
  stepKey: string,
  v: CallView,
  execs: readonly Execution[],
  askedAt: number | undefined,
  next: (e: Execution) => number | undefined,
): BuiltSpan[] {
  const t = ctx.timeline;
  const key = `${ctx.turnId}/call/${v.id}`;
  const activity = [...execs].reverse().find((e) => e.kind === 'activity');
  const locals = execs.filter((e) => e.kind === 'local');
  const local = locals[locals.length - 1];
  const act = activity?.kind === 'activity' ? activity.item : undefined;
  const loc = local?.kind === 'local' ? local.item : undefined;

  // What came back: the activity's result, the marker's, the tool message, or the record's verdict.
  const message = t.toolMessages.get(v.id);
  const parsedMessage = message ? parseArgs(message.content) : undefined;
  const outcome: Outcome | undefined =
    (act?.result as Outcome | undefined) ??
    (!act && loc?.result !== undefined ? (loc.result as Outcome) : undefined) ??
    (parsedMessage && typeof parsedMessage === 'object' ? (parsedMessage as Outcome) : undefined) ??
    (v.record ? { ok: v.record.ok, ...(v.record.error_type ? { error_type: v.record.error_type } : {}) } : undefined);

  const asked = approvalWait(t, v.id)?.pending;
  const pendingCall = asked?.kind === 'approvals' ? asked.calls.find((c) => c.callId === v.id) : undefined;
  // While a human is asked, the request carries the policy's reason and rule.
  const args = parseArgs(v.call.arguments);
  const policy: PolicyRecord | undefined =
    (act?.input.policy as PolicyRecord | undefined) ??
    v.record?.policy ??
    (pendingCall ? { decision: 'ask', reason: pendingCall.reason, ...(pendingCall.rule ? { rule: pendingCall.rule } : {}) } : undefined) ??
    (loc ? ranLocally(t, v.call.name, args) : undefined);
  // A custom tool (defineTool) is named by its execution's input.
  const source = toolSource(v.call.name) ?? (act?.input.custom ? 'custom' : undefined);
  const def = REGISTRY.get(v.call.name);
  const kind = act ? 'activity' : loc ? 'local_activity' : 'workflow';

  // Times: from when the call was asked (when a human had to approve it) or ran, to its result.
  let start = act?.scheduledAt ?? loc?.scheduledAt ?? loc?.at ?? askedAt;
  let end: number | undefined = act?.closedAt ?? (loc ? localEnd(loc, next(local!)) : undefined);
  if (locals[0]?.kind === 'local' && act) start = locals[0].item.scheduledAt ?? locals[0].item.at;

  const children: Span[] = [];
  const approval = approvalSpan(ctx, key, v, policy, askedAt);
  if (approval) {
    children.push(approval.span);
    if (approval.start !== undefined) start = Math.min(start ?? approval.start, approval.start);
    if (!act && !loc && approval.end !== undefined) end = approval.end;
  }
  if (v.call.name === 'ask_user') {
    const q = questionSpan(ctx, key, v, args, outcome, askedAt);
    children.push(q.span);
    if (q.end !== undefined) end = Math.max(end ?? q.end, q.end);
  }
  for (const q of t.mcpQuestions.filter((m) => m.callId === v.id)) children.push(mcpQuestionSpan(ctx, key, q));
  if (end === undefined && outcome) end = start;

  const status: SpanStatus = outcome ? (outcome.ok ? 'ok' : 'error') : ctx.running ? 'running' : 'error';
  const attempts = act?.attempt ?? loc?.attempt;
  const span = makeSpan(ctx, key, stepKey, {
    type: 'tool_call',
    name: v.call.name,
    start,
    end,
    status,
    ...(source ? { source } : {}),
    input: {
      call_id: v.id,
      step,
      args,
      ...(def ? { risk: def.risk } : {}),
      ...(policy ? { policy } : {}),
    },
    output: outcome
      ? {
          ...outcome,
          execution: {
            kind,
            ...(attempts !== undefined ? { attempts } : {}),
            ...(act?.lastFailure ? { last_failure: act.lastFailure } : {}),
            ...(act?.identity ? { worker: act.identity } : {}),
            // An MCP call first tried as a local activity, then sent back to run as an activity.
            ...(loc && act ? { local_attempt: loc.failure ?? 'ok' } : {}),
          },
          ...(approval ? { approval: approval.summary } : {}),
        }
      : null,
    error: outcome ? (outcome.ok ? null : [outcome.error_type, outcome.message].filter(Boolean).join(': ') || 'failed') : ctx.running ? null : 'no result in history',
  });
  return [
    {
      span,
      refs: {
        kind: 'tool_call',
        args: (act?.input.args as unknown) ?? args,
        ...(outcome?.stored?.ref ? { resultRef: outcome.stored.ref } : {}),
      },
    },
    ...children.map((c) => ({ span: c })),
  ];
}

/** The approval of a call the policy sent to a human: asked when, decided by whom and when. */
function approvalSpan(
  ctx: TurnContext,
  callKey: string,
  v: CallView,
  policy: PolicyRecord | undefined,
  askedAt: number | undefined,
): { span: BuiltSpan['span']; start?: number; end?: number; summary: Record<string, unknown> } | undefined {
  const t = ctx.timeline;
  const wait = approvalWait(t, v.id);
  const record: ApprovalRecord | undefined = v.record?.approval;
  if (!wait && !record && policy?.decision !== 'ask') return undefined;
  const pending: PendingApproval | undefined = wait?.pending.kind === 'approvals' ? wait.pending.calls.find((c) => c.callId === v.id) : undefined;
  const decided = decisionOf(t, v.id)?.update;
  const args = (decided?.args ?? {}) as { approve?: boolean; reason?: string; always?: boolean };
  const timedOutAt = !decided ? (wait ? lastWaitFor(t, v.id)?.timedOutAt : undefined) : undefined;
  const timedOut = !decided && (record?.timedOut === true || timedOutAt !== undefined || v.known?.error_type === 'APPROVAL_TIMEOUT');
  const start = wait?.at ?? askedAt;
  const end = decided?.at ?? timedOutAt ?? (timedOut ? askedAt : undefined);
  const approved = decided ? args.approve === true : record ? record.approved : undefined;
  const summary: Record<string, unknown> = {
    ...(approved !== undefined ? { approved } : {}),
    ...(timedOut ? { timed_out: true } : {}),
    ...(decided ? { by: decided.identity, at: iso(decided.at), update_id: decided.updateId } : {}),
    ...(args.reason ?? record?.reason ? { reason: args.reason ?? record?.reason } : {}),
    ...(args.always ?? record?.always ? { always: true } : {}),
    ...(!decided && record?.by ? { by: record.by, claimed: true } : {}),
    ...(!decided && record?.at ? { at: record.at } : {}),
  };
  const status: SpanStatus = decided || timedOut || record ? (approved ? 'ok' : 'error') : ctx.running ? 'running' : 'error';
  const span = makeSpan(ctx, `${callKey}/approval`, callKey, {
    type: 'approval',
    name: `approval ${v.call.name}`,
    start,
    end,
    status,
    input: {
      call_id: v.id,
      tool: v.call.name,
      ...(pending ? { args: pending.args, risk: pending.risk, reason: pending.reason, ...(pending.rule ? { rule: pending.rule } : {}), ...(pending.digest ? { digest: pending.digest } : {}) } : {}),
      ...(!pending && policy ? { reason: policy.reason, ...(policy.rule ? { rule: policy.rule } : {}) } : {}),
    },
    output: status === 'running' ? null : summary,
    error: status === 'error' ? (timedOut ? 'nobody decided in time' : approved === false ? `denied${summary.reason ? `: ${String(summary.reason)}` : ''}` : 'no decision in history') : null,
  });
  return { span, ...(start !== undefined ? { start } : {}), ...(end !== undefined ? { end } : {}), summary };
}

/** The last wait that still listed this call (a partial decision asks again for the rest). */
function lastWaitFor(t: Timeline, id: string): Wait | undefined {
  return [...t.waits].reverse().find((w) => w.pending.kind === 'approvals' && w.pending.calls.some((c) => c.callId === id));
}

/** The answer update to the question `key` (an ask_user call id, or an MCP question key). */
function answerOf(t: Timeline, key: string, wait: Wait | undefined): UpdateItem | undefined {
  const answers = t.updates.filter((u) => u.name === 'answer' && u.failure === undefined);
  const named = answers.find((u) => (u.result as { callId?: string } | undefined)?.callId === key || (u.args as { callId?: string } | undefined)?.callId === key);
  if (named) return named;
  // Without a call id in the update: the answer given while this question was the one pending.
  if (!wait) return undefined;
  return answers.find((u) => u.at >= wait.at && (wait.endedAt === undefined || u.at <= wait.endedAt) && !(u.result as { callId?: string } | undefined)?.callId);
}

function questionWait(t: Timeline, key: string): Wait | undefined {
  return t.waits.find((w) => w.pending.kind === 'question' && w.pending.callId === key);
}

/** The question of an ask_user call and its answer (who, when), or its timeout. */
function questionSpan(ctx: TurnContext, callKey: string, v: CallView, args: unknown, outcome: Outcome | undefined, askedAt: number | undefined) {
  const t = ctx.timeline;
  const wait = questionWait(t, v.id);
  const answer = answerOf(t, v.id, wait);
  const question = (args as { question?: unknown })?.question;
  const timedOut = !answer && (outcome?.error_type === 'USER_TIMEOUT' || wait?.timedOutAt !== undefined);
  const start = wait?.at ?? askedAt;
  const end = answer?.at ?? wait?.timedOutAt ?? (outcome ? start : undefined);
  const text = (answer?.args as { text?: unknown } | undefined)?.text ?? (outcome?.ok ? (outcome.result as { answer?: unknown } | undefined)?.answer : undefined);
  const status: SpanStatus = answer || (outcome?.ok && text !== undefined) ? 'ok' : timedOut || !ctx.running ? 'error' : 'running';
  const span = makeSpan(ctx, `${callKey}/question`, callKey, {
    type: 'ask_user',
    name: 'ask_user',
    start,
    end,
    status,
    input: { call_id: v.id, question: typeof question === 'string' ? question : JSON.stringify(question ?? null) },
    output:
      status === 'running'
        ? null
        : {
            ...(text !== undefined ? { answer: text } : {}),
            ...(answer ? { by: answer.identity, at: iso(answer.at), update_id: answer.updateId } : {}),
            ...(timedOut ? { timed_out: true } : {}),
          },
    error: status === 'error' ? (timedOut ? 'nobody answered in time' : 'no answer in history') : null,
  });
  return { span, ...(end !== undefined ? { end } : {}) };
}

/** A question an MCP server asked during a call, and its answer. */
function mcpQuestionSpan(ctx: TurnContext, callKey: string, q: Timeline['mcpQuestions'][number]): BuiltSpan['span'] {
  const t = ctx.timeline;
  const wait = questionWait(t, q.key);
  const answer = answerOf(t, q.key, wait);
  const timedOut = !answer && wait?.timedOutAt !== undefined;
  // The call's activity may end the question without an answer (the call failed or timed out).
  const dropped = !answer && !timedOut && wait?.endedAt !== undefined;
  const status: SpanStatus = answer ? 'ok' : timedOut || dropped || !ctx.running ? 'error' : 'running';
  return makeSpan(ctx, `${callKey}/question/${q.key}`, callKey, {
    type: 'ask_user',
    name: `ask_user mcp:${q.server}`,
    start: q.at,
    end: answer?.at ?? wait?.timedOutAt ?? wait?.endedAt,
    status,
    source: `mcp:${q.server}`,
    input: { call_id: q.callId, key: q.key, server: q.server, question: q.message },
    output:
      status === 'running'
        ? null
        : {
            ...(answer ? { answer: (answer.args as { text?: unknown } | undefined)?.text, by: answer.identity, at: iso(answer.at), update_id: answer.updateId } : {}),
            ...(timedOut ? { timed_out: true } : {}),
          },
    error: status === 'error' ? (timedOut ? 'nobody answered in time' : dropped ? 'the call ended before an answer' : 'no answer in history') : null,
  });
}
