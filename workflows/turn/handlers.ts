/**
 * The turn's side of the people around it: its state query, the answer and approval updates,
 * the questions MCP servers ask during calls, the durable wait on a person (telling the parent
 * session around it), and where an eval case or a rerun's record stands in for the person.
 * An approval that does not match what is pending is refused by the update's validator, before
 * anything is written to history; what an `--always` approval grants is said back to the person
 * who gave it. An eval case gives its approval decisions and its answers to ask_user itself, so a
 * trial never waits on a human.
 */
import { condition, currentUpdateInfo, getExternalWorkflowHandle, setHandler, workflowInfo } from '@temporalio/workflow';
import type { EvalApprovals } from '../../deterministic/eval';
import {
  answerUpdate,
  decideApprovalsUpdate,
  mcpAnswerQuery,
  mcpQuestionSignal,
  turnStateQuery,
  turnStatusSignal,
  MAX_MESSAGE_BYTES,
  utf8Length,
  type ApprovalDecisionInput,
  type McpQuestion,
  type TurnStatusSignal,
} from '../../deterministic/messages';
import { questionText, validateMcpAnswer } from '../../deterministic/mcp-questions';
import { alwaysPatternProblem, alwaysRuleFor, describeGrant } from '../../deterministic/policy/always';
import type { Policy } from '../../deterministic/policy/schema';
import type { TurnInput } from '../../deterministic/session';
import type { ApprovalRecord } from '../../deterministic/call-records';
import type { PendingApproval, TurnState } from '../../deterministic/session-state';
import type { TurnOps } from './loop';
import type { RunEvents } from './run-events';
import { registerMcpAnswerWait } from './mcp-answer-wait';
import { toSession } from './background';

/** The turn's state and its waits on people, as the turn workflow and its loop use them. */
export interface TurnWaits {
  /** What the state query returns; the workflow also sets its step and its end. */
  state: TurnState;
  /** Waits on a person for a pending item, the session told before and after; resolves false on timeout. */
  waitForHuman(pending: NonNullable<TurnState['pending']>, done: () => boolean, timeoutMs: number): Promise<boolean>;
  /** A call whose activity failed (its worker lost) leaves no question of its server pending. */
  dropMcpQuestions(callId: string): Promise<void>;
  askUser: TurnOps['askUser'];
  awaitApprovals: TurnOps['awaitApprovals'];
}

/**
 * Registers the turn's query, signal and update handlers (before its first await) and returns its
 * waits. `beforeWait` runs before the turn waits on a person (model-call.ts records what ran
 * locally first); `onWait` hears each wait as it begins.
 */
export function registerTurnHandlers(
  input: TurnInput,
  events: RunEvents,
  policy: Policy | undefined,
  beforeWait?: () => Promise<void>,
  onWait?: (pending: NonNullable<TurnState['pending']>) => void,
): TurnWaits {
  const { limits } = input.config;
  const state: TurnState = { turnId: input.turnId, status: 'running', step: 0 };
  const answers = new Map<string, string>();
  const decisions = new Map<string, ApprovalRecord>();
  // Questions MCP servers asked during calls, by key; their answers go to `answers` under the key.
  const mcpQuestions = new Map<string, McpQuestion>();
  // Questions whose call ended before an answer: their activity's wait ends too.
  const droppedQuestions = new Set<string>();
  let askedInEval = 0;
  setHandler(turnStateQuery, () => state);
  setHandler(mcpAnswerQuery, (key) => answers.get(key));
  registerMcpAnswerWait({ known: (key) => mcpQuestions.has(key) || answers.has(key), answer: (key) => answers.get(key), dropped: (key) => droppedQuestions.has(key) });
  // One question is shown at a time: those of other calls running at the same time wait their turn here.
  const queued: McpQuestion[] = [];
  const showQuestion = async (q: McpQuestion) => {
    state.status = 'waiting_for_user';
    state.pending = { kind: 'question', callId: q.key, question: questionText(q) };
    await notifyParent({ turnId: input.turnId, status: state.status, pending: state.pending });
  };
  // After a question is answered or dropped: the next one waiting, or the turn runs again.
  const nextQuestion = async () => {
    const next = queued.shift();
    if (next) await showQuestion(next);
    else await notifyParent({ turnId: input.turnId, status: 'running' });
  };
  setHandler(mcpQuestionSignal, async (q) => {
    events.add('message');
    // A retried attempt asking the same question again reads the answer already given.
    if (answers.has(q.key) || mcpQuestions.has(q.key)) return;
    mcpQuestions.set(q.key, q);
    const shown = state.pending?.kind === 'question' ? state.pending.callId : undefined;
    if (shown !== undefined && mcpQuestions.has(shown) && callOf(shown) !== callOf(q.key)) {
      queued.push(q);
      return;
    }
    await showQuestion(q);
  });
  setHandler(
    answerUpdate,
    async (a) => {
      events.add('message');
      // Who answered is the client identity in this update's history event, not a field of it.
      const callId = state.pending!.kind === 'question' ? state.pending!.callId : '';
      answers.set(callId, a.text);
      state.pending = undefined;
      state.status = 'running';
      // An MCP server's question: the call goes on in its activity; tell the session we run again
      // (or show the question another call asked meanwhile).
      if (mcpQuestions.has(callId)) await nextQuestion();
      return { accepted: true as const, callId };
    },
    {
      validator: (a) => {
        const p = state.pending;
        if (p?.agent) throw new Error(subAgentWait(p.agent));
        if (!p || p.kind !== 'question') throw new Error('no question is pending in this turn');
        if (a.callId && a.callId !== p.callId) throw new Error(`no pending question has call id ${a.callId}`);
        if (typeof a.text !== 'string' || a.text.trim() === '') throw new Error('the answer must be non-empty text');
        // The answer becomes part of the conversation every later model call carries.
        if (utf8Length(a.text) > MAX_MESSAGE_BYTES) throw new Error(`the answer is more than ${MAX_MESSAGE_BYTES / 1024} KiB of UTF-8 text`);
        const q = mcpQuestions.get(p.callId);
        if (q) validateMcpAnswer(q, a.text);
      },
    },
  );
  setHandler(
    decideApprovalsUpdate,
    async (d) => {
      events.add('message');
      const pending = state.pending!.kind === 'approvals' ? state.pending!.calls : [];
      // Updates recorded before approval binding named ids only, or nothing for "all pending".
      const ids = d.calls?.length ? d.calls.map((c) => c.callId) : d.callIds?.length ? d.callIds : pending.map((c) => c.callId);
      // Who decided and when are the identity and time the server recorded in this update's
      // event; the record points at it rather than trusting fields the client filled in.
      const updateId = currentUpdateInfo()?.id;
      for (const id of ids) {
        decisions.set(id, {
          approved: d.approve,
          ...(updateId ? { updateId } : {}),
          ...(d.reason ? { reason: d.reason } : {}),
          ...(d.always ? { always: true } : {}),
          ...(d.always && d.pattern !== undefined ? { pattern: d.pattern } : {}),
        });
      }
      const left = pending.filter((c) => !decisions.has(c.callId));
      state.pending = left.length ? { kind: 'approvals', calls: left } : undefined;
      if (!left.length) state.status = 'running';
      // Keep the session's view in step when only part of the step was decided.
      else await notifyParent({ turnId: input.turnId, status: 'waiting_for_approval', pending: state.pending! });
      // What each `--always` adds to the session, said back to the person who gave it.
      const granted = d.always ? grantsOf(pending.filter((c) => ids.includes(c.callId)), policy, d.pattern) : [];
      return granted.length ? { decided: ids, granted } : { decided: ids };
    },
    {
      validator: (d) => validateDecision(state.pending, d, policy),
    },
  );

  const waitForHuman = async (pending: NonNullable<TurnState['pending']>, done: () => boolean, timeoutMs: number): Promise<boolean> => {
    await beforeWait?.();
    state.status = pending.kind === 'question' ? 'waiting_for_user' : pending.kind === 'budget' ? 'waiting_for_budget' : 'waiting_for_approval';
    state.pending = pending;
    // The session's webhook, if it has one (notify.ts): started, not waited for.
    onWait?.(pending);
    await notifyParent({ turnId: input.turnId, status: state.status, pending });
    const ok = await condition(done, timeoutMs);
    state.status = 'running';
    state.pending = undefined;
    await notifyParent({ turnId: input.turnId, status: 'running' });
    return ok;
  };

  const dropMcpQuestions = async (callId: string) => {
    for (const key of mcpQuestions.keys()) if (callOf(key) === callId && !answers.has(key)) droppedQuestions.add(key);
    for (let i = queued.length - 1; i >= 0; i--) if (callOf(queued[i]!.key) === callId) queued.splice(i, 1);
    const p = state.pending;
    if (p?.kind !== 'question' || !p.callId.startsWith(`${callId}#e`)) return;
    state.pending = undefined;
    state.status = 'running';
    await nextQuestion();
  };

  const askUser = async (callId: string, question: string): Promise<string | undefined> => {
    // An eval trial answers from its case, in order; none left is the user not answering.
    if (input.evalHumans) return input.evalHumans.answers[askedInEval++];
    events.add('wait');
    const answered = await waitForHuman({ kind: 'question', callId, question }, () => answers.has(callId), limits.askUserTimeoutMs);
    return answered ? answers.get(callId) : undefined;
  };

  const awaitApprovals: TurnOps['awaitApprovals'] = async (calls) => {
    // A rerun decides the calls its record decided, as they were decided: nobody is asked again.
    for (const c of calls) {
      const d = input.recordedDecisions?.find((r) => r.digest === c.digest);
      if (d && !decisions.has(c.callId)) decisions.set(c.callId, { approved: d.approved, fromRecord: d.from, ...(d.reason ? { reason: d.reason } : {}) });
      else if (input.evalHumans && !decisions.has(c.callId)) decisions.set(c.callId, evalDecision(input.evalHumans.approvals, c));
    }
    if (!(input.recordedDecisions || input.evalHumans) || !calls.every((c) => decisions.has(c.callId))) {
      events.add('wait');
      await waitForHuman({ kind: 'approvals', calls }, () => calls.every((c) => decisions.has(c.callId)), limits.approvalTimeoutMs);
    }
    const out = new Map<string, ApprovalRecord>();
    for (const c of calls) out.set(c.callId, decisions.get(c.callId) ?? { approved: false, timedOut: true });
    return out;
  };

  return { state, waitForHuman, dropMcpQuestions, askUser, awaitApprovals };
}

/** The call an MCP question's key belongs to (`<callId>#e<n>`). */
function callOf(key: string): string {
  const at = key.lastIndexOf('#e');
  return at < 0 ? key : key.slice(0, at);
}

/** Tells the parent session about a wait; a turn started on its own has no parent to tell. */
export async function notifyParent(status: TurnStatusSignal): Promise<void> {
  // A background sub-agent tells its session: the turn that started it may be gone.
  if (await toSession(status)) return;
  const parent = workflowInfo().parent;
  if (!parent) return;
  await getExternalWorkflowHandle(parent.workflowId).signal(turnStatusSignal, status);
}

/** Refuses a decision that does not match what is pending, before anything is written to history. */
function validateDecision(p: TurnState['pending'], d: ApprovalDecisionInput, policy: Policy | undefined): void {
  if (p?.agent) throw new Error(subAgentWait(p.agent));
  if (!p || p.kind !== 'approvals') throw new Error('no approval is pending in this turn');
  if (typeof d?.approve !== 'boolean') throw new Error('approve must be true or false');
  const pendingList = p.calls.map((c) => c.callId).join(', ');
  if (!Array.isArray(d.calls) || d.calls.length === 0) {
    throw new Error(`name each call you decide with the digest you were shown (pending: ${pendingList}); update the client`);
  }
  const seen = new Set<string>();
  for (const c of d.calls) {
    if (seen.has(c?.callId)) throw new Error(`call ${c.callId} is named twice`);
    seen.add(c?.callId);
    const open = p.calls.find((x) => x.callId === c?.callId);
    if (!open) throw new Error(`call ${c?.callId} is not pending (unknown or already decided); pending: ${pendingList}`);
    if (open.digest && c.digest !== open.digest) {
      throw new Error(`call ${c.callId} is not the call you were shown (its tool or arguments differ); look again with \`harness status\``);
    }
  }
  if (d.always && !d.approve) throw new Error('--always only goes with an approval');
  if (d.pattern !== undefined) {
    if (!d.always) throw new Error('a pattern only goes with --always');
    if (policy?.version !== 3) throw new Error('this turn cannot grant a pattern; approve with --always alone');
    for (const c of d.calls) {
      const open = p.calls.find((x) => x.callId === c.callId)!;
      const problem = typeof d.pattern === 'string' ? alwaysPatternProblem({ tool: open.tool, risk: open.risk, args: open.args as Record<string, unknown> }, d.pattern) : 'the pattern must be text';
      if (problem) throw new Error(`call ${c.callId}: ${problem}`);
    }
  }
}

/** What a turn says when asked to decide what one of its sub-agents waits for (the client sends it to the child). */
function subAgentWait(agent: { turnId: string; path: string[] }): string {
  return `this is the wait of sub-agent ${agent.path.join(' › ')}: decide it at its turn ${agent.turnId} (update the client)`;
}

/** One line per rule the approval of these calls adds to the session (duplicates once). */
function grantsOf(calls: readonly PendingApproval[], policy: Policy | undefined, pattern?: string): string[] {
  const lines = calls.map((c) => describeGrant(alwaysRuleFor({ tool: c.tool, risk: c.risk, args: c.args as Record<string, unknown> }, policy, pattern)));
  return [...new Set(lines)];
}

/** The case's decision on a call that asks: all approved, all denied, or the first rule that matches. */
function evalDecision(approvals: EvalApprovals, call: PendingApproval): ApprovalRecord {
  if (approvals === 'approve') return { approved: true, fromRecord: 'eval case' };
  if (approvals === 'deny') return { approved: false, reason: 'the eval case denies calls that ask', fromRecord: 'eval case' };
  const args = JSON.stringify(call.args ?? null);
  const rule = approvals.find((r) => r.tool === call.tool && (r.args_contain === undefined || args.includes(r.args_contain)));
  if (!rule) return { approved: false, reason: 'no decision of the eval case matches this call', fromRecord: 'eval case' };
  return rule.approve ? { approved: true, fromRecord: 'eval case' } : { approved: false, reason: 'denied by the eval case', fromRecord: 'eval case' };
}
