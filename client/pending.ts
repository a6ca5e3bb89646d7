/**
 * Everything that waits on a person, across sessions and task queues (`harness pending`,
 * HarnessClient.pending()): each call waiting for approval, each question waiting for an
 * answer and each turn waiting for a budget decision. Visibility lists the running sessions, whatever task queue they run on; each
 * session's current run tells what its open turn waits for (the `turnStatus` signals the turn
 * sends it, as `harness sessions` reads them): no worker is needed, so a session whose worker
 * is gone is listed too. Decide each with approve/deny (by call id), answer (by question id) or
 * decideBudget (by session: a turn waits for one budget at a time).
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { budgetLine, type BudgetScope, type BudgetUnit } from '../deterministic/budget';
import type { Pending } from '../deterministic/session-state';
import type { Risk } from '../deterministic/types';
import type { HistoryEvent } from '../history/trace/events';
import { readSession, runEvents } from './session-list';
import { backgroundWaits } from './background-waits';
import { confirmedWait } from './turn-record';

/** Where a wait is: the session, its turn, the task queue its worker polls, and since when it waits. */
interface PendingWhere {
  sessionId: string;
  turnId: string;
  /** The session's task queue (the one its worker polls). */
  taskQueue: string;
  /** When the turn began waiting for this (ISO 8601), as the session recorded it. */
  since: string;
  /** A sub-agent's wait: the agents from the session's down to the one that waits (`['lead', 'researcher']`), and its child turn. */
  agentPath?: string[];
  agentTurnId?: string;
}

/** A tool call waiting for approval: approve or deny it with its call id (`harness.approve(sessionId, { callIds: [callId] })`). */
export interface PendingApprovalItem extends PendingWhere {
  kind: 'approval';
  callId: string;
  tool: string;
  /** The arguments as the person deciding is shown them. */
  args: unknown;
  /** Digest of tool and arguments: a decision naming it applies only to what was shown. */
  digest?: string;
  risk: Risk;
  /** Why the policy asks. */
  reason: string;
  /** The policy rule that asks, when one does. */
  rule?: string;
}

/** A question waiting for an answer: `harness.answer(sessionId, text, { questionId })`. */
export interface PendingQuestionItem extends PendingWhere {
  kind: 'question';
  /** The asking call's id (`<callId>#e…` for a question an MCP server asks during a call). */
  questionId: string;
  question: string;
}

/**
 * A turn whose next model call would pass a budget: raise it (`harness.decideBudget(sessionId,
 * { raise: { unit, amount } })`, `harness approve <session> --budget +N`) or stop the turn
 * (`{ stop: true }`, `harness deny <session>`).
 */
export interface PendingBudgetItem extends PendingWhere {
  kind: 'budget';
  /** The budget reached: the turn's or the session's, in tokens or USD. */
  scope: BudgetScope;
  unit: BudgetUnit;
  /** The ceiling with every raise so far, what is spent and what the next call may take (in `unit`). */
  limit: number;
  spent: number;
  estimate: number;
  /** The step whose model call waits. */
  step?: number;
  /** One line saying what is reached. */
  summary: string;
  /** How to decide it (the commands, with this session's id). */
  decide: string;
}

/** One thing a person is waited on for. */
export type PendingItem = PendingApprovalItem | PendingQuestionItem | PendingBudgetItem;

/** What pending() reads. */
export interface PendingOptions {
  /** Only sessions on this task queue (default: every task queue). */
  taskQueue?: string;
  /** Read at most this many running sessions, newest first (default 1000). */
  limit?: number;
}

/** Sessions read at once: each is one history read. */
const PARALLEL = 8;

/** Everything waiting on a person in running sessions, oldest wait first. */
export async function listPending(client: Client, opts: PendingOptions = {}): Promise<PendingItem[]> {
  const limit = opts.limit ?? 1000;
  const queue = opts.taskQueue ? ` AND TaskQueue = '${opts.taskQueue.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : '';
  const sessions: WorkflowExecutionInfo[] = [];
  for await (const wf of client.workflow.list({ query: `WorkflowType = 'sessionWorkflow' AND ExecutionStatus = 'Running'${queue}` })) {
    if (sessions.some((s) => s.workflowId === wf.workflowId)) continue;
    sessions.push(wf);
    if (sessions.length >= limit) break;
  }
  const items: PendingItem[] = [];
  for (let i = 0; i < sessions.length; i += PARALLEL) {
    const read = await Promise.all(sessions.slice(i, i + PARALLEL).map((wf) => sessionPending(client, wf)));
    items.push(...read.flat());
  }
  return items.sort((a, b) => a.since.localeCompare(b.since) || a.sessionId.localeCompare(b.sessionId));
}

/**
 * What one session waits for: its current run's history names the turns that wait (its open
 * turn, its background sub-agents), and each waiting turn's own history says what it waits for
 * (turn-record.ts): a signal to the session can point at a turn, never put words in its mouth.
 */
async function sessionPending(client: Client, wf: Pick<WorkflowExecutionInfo, 'workflowId' | 'runId' | 'taskQueue'>): Promise<PendingItem[]> {
  let events: HistoryEvent[];
  try {
    events = await runEvents(client, wf.workflowId, wf.runId);
  } catch {
    return []; // it closed (or continued as new) since it was listed: nothing of it waits here
  }
  const facts = readSession(events);
  const turnId = facts.openTurn;
  const claimed = facts.waiting?.pending;
  const items = async (at: string, pending: Pending, background: boolean): Promise<PendingItem[]> => {
    const wait = await confirmedWait(client, wf.workflowId, at, pending, background);
    return wait ? itemsOf(wf, at, wait.pending, wait.since) : [];
  };
  const read = await Promise.all([
    ...(turnId && claimed ? [items(turnId, claimed, false)] : []),
    // Background sub-agents' waits: their own turns wait, whatever turn of the session runs.
    ...backgroundWaits(events).map((w) => items(w.turnId, w.pending, true)),
  ]);
  return read.flat();
}

/** The items of one wait of a turn. */
function itemsOf(wf: Pick<WorkflowExecutionInfo, 'workflowId' | 'taskQueue'>, turnId: string, pending: Pending, since: string): PendingItem[] {
  const agent = pending.agent ? { agentPath: pending.agent.path, agentTurnId: pending.agent.turnId } : {};
  const where = { sessionId: wf.workflowId, turnId, taskQueue: wf.taskQueue, since, ...agent };
  if (pending.kind === 'question') return [{ ...where, kind: 'question', questionId: pending.callId, question: pending.question }];
  if (pending.kind === 'budget') {
    const { scope, unit, limit, spent, estimate, step } = pending;
    const example = unit === 'usd' ? '+$0.50' : '+5000';
    const decide = `harness approve ${wf.workflowId} --budget ${example} (in ${unit}) raises it; harness deny ${wf.workflowId} stops the turn`;
    return [{ ...where, kind: 'budget', scope, unit, limit, spent, estimate, ...(step !== undefined ? { step } : {}), summary: budgetLine(pending), decide }];
  }
  if (pending.kind !== 'approvals') return [];
  return pending.calls.map((c) => ({
    ...where,
    kind: 'approval',
    callId: c.callId,
    tool: c.tool,
    args: c.args,
    ...(c.digest ? { digest: c.digest } : {}),
    risk: c.risk,
    reason: c.reason,
    ...(c.rule ? { rule: c.rule } : {}),
  }));
}

