/**
 * The tool calls of one step, as spans: what the model asked for (its reply), how the policy
 * judged each call, how it ran and what came back. Which history belongs to which call is
 * call-matching.ts; the approval and question spans under a call are human-spans.ts.
 */
import { builtinRegistry } from '../../deterministic/builtin-tools';
import { CANCELLED_CALL_MESSAGE } from '../../deterministic/errors';
import { ranLocally } from './local-policy';
import type { PolicyRecord } from '../../deterministic/call-records';
import type { ToolCall } from '../../deterministic/types';
import { callId, localEnd, matchExecutions, nextStart, type CallView, type Outcome } from './call-matching';
import { approvalSpan, approvalWait, mcpQuestionSpan, questionSpan } from './human-spans';
import { sleepSpan } from './sleeps';
import type { Execution } from './timeline';
import { MAX_PAYLOAD_DEPTH, MAX_SHOWN_DEPTH, parseBounded } from './bounded';
import { makeSpan, type BuiltSpan, type Span, type SpanStatus, type TurnContext } from './types';

const REGISTRY = builtinRegistry();

/** `local`, `skill`, `mcp:<server>` (tools named `mcp__<server>__<tool>`); custom tools are known by their execution. */
function toolSource(name: string): string | undefined {
  if (name.startsWith('mcp__')) return `mcp:${name.slice(5).split('__')[0]}`;
  return REGISTRY.get(name)?.source;
}

/**
 * A call's arguments as a value (the model sends a JSON string; a malformed one stays a string),
 * nested at most `max` levels (bounded.ts): the workflow refuses deeper arguments, but history
 * keeps the call as the model wrote it.
 */
export function parseArgs(text: string, max = MAX_SHOWN_DEPTH): unknown {
  try {
    return text.trim() === '' ? {} : parseBounded(text, max);
  } catch {
    return text;
  }
}

const earliest = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? b : b === undefined ? a : Math.min(a, b));

/** Builds the tool_call spans (with their approval and ask_user children) of a step. */
export function callSpans(ctx: TurnContext, step: number, stepKey: string, calls: readonly ToolCall[], askedAt: number | undefined): BuiltSpan[] {
  const t = ctx.timeline;
  const views: CallView[] = calls.map((call, index) => {
    const id = callId(ctx, call, step, index);
    const record = t.records.get(id);
    const message = t.toolMessages.get(id);
    const fromMessage = message ? (parseArgs(message.content, MAX_PAYLOAD_DEPTH) as Outcome) : undefined;
    const known = fromMessage && typeof fromMessage === 'object' ? fromMessage : record ? { ok: record.ok, ...(record.error_type ? { error_type: record.error_type } : {}) } : undefined;
    return { call, id, index, ...(record ? { record } : {}), ...(known ? { known } : {}) };
  });
  const stepExecutions = t.executions.get(step) ?? [];
  const executions = matchExecutions(ctx, views, stepExecutions);
  const out: BuiltSpan[] = [];
  // A tool ended before whatever came next began: the next call of its step, or (its step's last) the model call after it.
  const next = (e: Execution) => earliest(nextStart(stepExecutions, e), e.kind === 'local' ? e.item.nextAt : undefined);
  for (const v of views) out.push(...oneCall(ctx, step, stepKey, v, executions.get(v.id) ?? [], askedAt, next));
  return out;
}

/** One call's tool_call span, followed by the approval and question spans under it. */
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
  const parsedMessage = message ? parseArgs(message.content, MAX_PAYLOAD_DEPTH) : undefined;
  const outcome: Outcome | undefined =
    (act?.result as Outcome | undefined) ??
    (!act && loc?.result !== undefined ? (loc.result as Outcome) : undefined) ??
    (parsedMessage && typeof parsedMessage === 'object' ? (parsedMessage as Outcome) : undefined) ??
    (v.record ? { ok: v.record.ok, ...(v.record.error_type ? { error_type: v.record.error_type } : {}) } : undefined);

  // Cancelled with its turn: its activity stopped when asked to, or the turn answered the open call so.
  const cancelled = act?.canceled === true || (outcome?.ok === false && outcome.message === CANCELLED_CALL_MESSAGE);

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
  // A rerun answered it with the recorded result (workflows/turn/recorded-effects.ts): nothing ran.
  const kind = v.record?.replayed ? 'record' : act ? 'activity' : loc ? 'local_activity' : 'workflow';

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
  const sleep = v.call.name === 'wait' ? sleepSpan(ctx, key, v) : undefined;
  if (sleep) {
    children.push(sleep.span);
    if (sleep.end !== undefined) end = Math.max(end ?? sleep.end, sleep.end);
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
          ...(cancelled ? { cancelled: true } : {}),
          execution: {
            kind,
            ...(v.record?.replayed ? { replayed_from: v.record.replayed } : {}),
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
