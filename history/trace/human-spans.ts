/**
 * The human parts of a tool call, as spans under it: the approval of a call the policy sent to a
 * human (asked when, decided by whom and when, or timed out), and the questions asked during it
 * (ask_user, an MCP server's) with their answers.
 */
import type { ApprovalRecord, PolicyRecord } from '../../deterministic/call-records';
import { CANCELLED_CALL_MESSAGE } from '../../deterministic/errors';
import type { PendingApproval } from '../../deterministic/session-state';
import type { CallView, Outcome } from './call-matching';
import type { Timeline, UpdateItem, Wait } from './timeline';
import { iso, makeSpan, type BuiltSpan, type SpanStatus, type TurnContext } from './types';

/** The first wait that asked a human about this call. */
export function approvalWait(t: Timeline, id: string): Wait | undefined {
  return t.waits.find((w) => w.pending.kind === 'approvals' && w.pending.calls.some((c) => c.callId === id));
}

/** The decideApprovals update that decided this call, if any. */
export function decisionOf(t: Timeline, id: string): { update: UpdateItem } | undefined {
  for (const u of t.updates) {
    if (u.name !== 'decideApprovals' || u.failure !== undefined) continue;
    if (decidedIds(t, u).includes(id)) return { update: u };
  }
  return undefined;
}

/** The calls one decideApprovals update decided, as its result, its arguments or (older clients) the wait then open say. */
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

/** The approval of a call the policy sent to a human: asked when, decided by whom and when. */
export function approvalSpan(
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
  // Nobody decided because the turn was cancelled while it waited: not a denial.
  const cancelled = !decided && !timedOut && !record && v.known?.ok === false && v.known.message === CANCELLED_CALL_MESSAGE;
  const summary: Record<string, unknown> = {
    ...(approved !== undefined ? { approved } : {}),
    ...(cancelled ? { cancelled: true } : {}),
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
    error: status === 'error' ? (timedOut ? 'nobody decided in time' : cancelled ? 'the turn was cancelled before anyone decided' : approved === false ? `denied${summary.reason ? `: ${String(summary.reason)}` : ''}` : 'no decision in history') : null,
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

/** The wait that asked the question `key` (an ask_user call id, or an MCP question key). */
function questionWait(t: Timeline, key: string): Wait | undefined {
  return t.waits.find((w) => w.pending.kind === 'question' && w.pending.callId === key);
}

/** The question of an ask_user call and its answer (who, when), or its timeout. */
export function questionSpan(ctx: TurnContext, callKey: string, v: CallView, args: unknown, outcome: Outcome | undefined, askedAt: number | undefined) {
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
export function mcpQuestionSpan(ctx: TurnContext, callKey: string, q: Timeline['mcpQuestions'][number]): BuiltSpan['span'] {
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
