/**
 * Questions an MCP server asks during a call (elicitation), answered through the turn's durable
 * ask_user path. The call stays open in this activity; the turn learns of the question by a
 * signal (so it is in history, `status` shows it, and `harness answer` from any process replies),
 * and the activity waits for the answer on an update of the turn that completes when it is given
 * (workflows/turn/mcp-answer-wait.ts): Temporal's long poll of the update's outcome, not a query
 * asked every few seconds. It heartbeats meanwhile, so a lost worker is noticed and the
 * activity's cancellation reaches it.
 *
 * A question is keyed by the call and its position in the call (`<callId>#e<n>`): when a lost
 * worker's call is retried (tools the server calls idempotent) and the server asks the same
 * question again, the answer already given is reused instead of asking the human twice; the
 * update's id is the key too, so a retried wait joins the one already open.
 */
import type { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { mcpAnswerQuery, mcpAnswerWaitUpdate, mcpQuestionSignal } from '../../deterministic/messages';
import { elicitationResult } from '../../deterministic/mcp-questions';

/** The elicitation request as the pool hands it over, and the reply it expects. */
type ElicitHook = (req: { message: string; requestedSchema: Record<string, unknown> }) => Promise<{
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}>;

// A server's question enters the turn's history and a human's terminal: bounded, whatever it sends.
const MAX_MESSAGE_CHARS = 4_000;
const MAX_SCHEMA_CHARS = 16 * 1024;
const DEADLINE = Symbol('nobody answered in time');

/** The hook for one call: ask through the turn `turnId`, wait for its answer. */
export function durableElicitation(ctx: Context, call: { turnId: string; callId: string; server: string; timeoutMs?: number }): ElicitHook {
  let asked = 0;
  return async ({ message: text, requestedSchema }) => {
    asked += 1;
    if (JSON.stringify(requestedSchema ?? {}).length > MAX_SCHEMA_CHARS) return { action: 'decline' };
    const message = text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text;
    const key = `${call.callId}#e${asked}`;
    const turn = ctx.client.workflow.getHandle(call.turnId);
    try {
      let answer = await turn.query(mcpAnswerQuery, key);
      if (answer === undefined) {
        await turn.signal(mcpQuestionSignal, { key, callId: call.callId, server: call.server, message, requestedSchema });
        answer = await waitForAnswer(ctx, turn, key, call.timeoutMs);
      }
      // Nobody answered within the session's ask_user timeout, or the turn dropped the question.
      return answer === undefined ? { action: 'cancel' } : elicitationResult(requestedSchema, answer);
    } catch (err) {
      if (ctx.cancellationSignal.aborted) throw ctx.cancellationSignal.reason;
      // No such turn (ended, or never was), or it refused the question: nobody can answer it.
      if (err instanceof WorkflowNotFoundError || err instanceof WorkflowUpdateFailedError) {
        ctx.log.warn(`mcp ${call.server}: the question of call ${call.callId} cannot be asked (${(err as Error).message}); the server is told it was cancelled`);
        return { action: 'cancel' };
      }
      throw err;
    }
  };
}

/** The answer, once given; undefined when the deadline passed or the turn dropped the question. */
async function waitForAnswer(ctx: Context, turn: ReturnType<Context['client']['workflow']['getHandle']>, key: string, timeoutMs: number | undefined): Promise<string | undefined> {
  const ac = new AbortController();
  const onCancel = () => ac.abort(ctx.cancellationSignal.reason);
  ctx.cancellationSignal.addEventListener('abort', onCancel, { once: true });
  const deadline = timeoutMs === undefined ? undefined : setTimeout(() => ac.abort(DEADLINE), timeoutMs);
  const every = ctx.info.heartbeatTimeoutMs;
  const beat = every ? setInterval(() => ctx.heartbeat(), Math.max(100, every / 3)) : undefined;
  try {
    ctx.heartbeat();
    // The worker's connection may not cancel a long poll on abort: the race ends the wait here, and
    // the poll left behind ends with the update (the turn drops the question when the call ends).
    const wait = ctx.client.withAbortSignal(ac.signal, () => turn.executeUpdate(mcpAnswerWaitUpdate, { args: [key], updateId: `mcp-answer/${key}` }));
    wait.catch(() => undefined);
    const r = await Promise.race([wait, aborted(ac.signal)]);
    return 'answer' in r ? r.answer : undefined;
  } catch (err) {
    if (ac.signal.reason === DEADLINE) return undefined;
    throw err;
  } finally {
    clearTimeout(deadline);
    clearInterval(beat);
    ctx.cancellationSignal.removeEventListener('abort', onCancel);
  }
}

/** Rejects with the signal's reason once it aborts. */
function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
