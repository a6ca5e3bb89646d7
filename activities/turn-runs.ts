/**
 * awaitTurnRun: the session's wait for a turn that `harness retry` reset. Temporal reports a
 * child's completion to its parent once; the reset run completes later, so the session asks for
 * its result through the worker's own client instead, heartbeating while the run goes on.
 */
import { Context } from '@temporalio/activity';
import type { TurnResult } from '../deterministic/session';
import type { TurnState } from '../deterministic/session-state';
import { turnStateQuery, turnStatusSignal } from '../deterministic/messages';
import { rootCauseMessage } from '../deterministic/errors';
import { withHeartbeat } from './heartbeat';

interface AwaitTurnRunInput {
  workflowId: string;
  /** The run being reset: the wait is for the run after it. */
  afterRunId: string;
  /** How long the reset may take to appear before the retry counts as not having happened. */
  startWithinMs?: number;
}

interface AwaitTurnRunResult {
  runId?: string;
  result?: TurnResult;
  /** Why there is no result: no reset run appeared, or the reset run failed too. */
  problem?: string;
}

const START_WITHIN_MS = 2 * 60_000;
const POLL_MS = 500;

export async function awaitTurnRun(input: AwaitTurnRunInput): Promise<AwaitTurnRunResult> {
  return withHeartbeat(() => awaitRun(input));
}

async function awaitRun(input: AwaitTurnRunInput): Promise<AwaitTurnRunResult> {
  const ctx = Context.current();
  const { client } = ctx;
  // The CLI resets right after the session accepted the retry; a CLI that died in between
  // leaves the failed turn as it was once this passes.
  const deadline = Date.now() + (input.startWithinMs ?? START_WITHIN_MS);
  let runId: string | undefined;
  for (;;) {
    const latest = (await client.workflow.getHandle(input.workflowId).describe()).runId;
    if (latest !== input.afterRunId) {
      runId = latest;
      break;
    }
    if (Date.now() > deadline) return { problem: 'no reset run of the turn started (the retry was abandoned before the reset)' };
    await ctx.sleep(POLL_MS);
  }
  // Told alongside the wait, not before it: a query of a run whose worker was just lost waits on
  // that worker's sticky queue for seconds, and a result that is there already must not.
  let done = false;
  void tellWaiting(input.workflowId, runId, () => done);
  try {
    // result() follows the run's continue-as-new chain to the turn's end.
    return { runId, result: (await client.workflow.getHandle(input.workflowId, runId).result()) as TurnResult };
  } catch (err) {
    return { runId, problem: rootCauseMessage(err) };
  } finally {
    done = true;
  }
}

/**
 * A reset run that replays up to a wait (an approval, a question) waits again without telling
 * its session: it told it before the reset. The session (this activity's workflow) is told now,
 * from the turn's own state, so `harness status` shows the wait.
 */
async function tellWaiting(workflowId: string, runId: string, over: () => boolean): Promise<void> {
  const ctx = Context.current();
  const session = ctx.info.workflowExecution?.workflowId;
  if (!session) return;
  try {
    const ts = (await ctx.client.workflow.getHandle(workflowId, runId).query(turnStateQuery)) as TurnState;
    // The run ended meanwhile: the session adopts its result, and a wait told now would be stale.
    if (over() || (ts.status !== 'waiting_for_approval' && ts.status !== 'waiting_for_user' && ts.status !== 'waiting_for_budget')) return;
    await ctx.client.workflow
      .getHandle(session)
      .signal(turnStatusSignal, { turnId: workflowId, status: ts.status, ...(ts.pending ? { pending: ts.pending } : {}) });
  } catch {
    // The run is not answering queries yet or already ended: its next status change tells.
  }
}
