/**
 * Questions an MCP server asks during a call (elicitation), answered through the turn's durable
 * ask_user path. The call stays open in this activity; the turn learns of the question by a
 * signal (so it is in history, `status` shows it, and `harness answer` from any process replies),
 * and the activity reads the answer back with a query, heartbeating meanwhile.
 *
 * A question is keyed by the call and its position in the call (`<callId>#e<n>`): when a lost
 * worker's call is retried (tools the server calls idempotent) and the server asks the same
 * question again, the answer already given is reused instead of asking the human twice.
 */
import type { Context } from '@temporalio/activity';
import { mcpAnswerQuery, mcpQuestionSignal } from '../../deterministic/messages';
import { elicitationResult } from '../../deterministic/mcp-questions';

/** The elicitation request as the pool hands it over, and the reply it expects. */
type ElicitHook = (req: { message: string; requestedSchema: Record<string, unknown> }) => Promise<{
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}>;

// A server's question enters the turn's history and a human's terminal: bounded, whatever it sends.
const MAX_MESSAGE_CHARS = 4_000;
const MAX_SCHEMA_CHARS = 16 * 1024;
const FIRST_POLL_MS = 250;
const MAX_POLL_MS = 2_000;

/** The hook for one call: ask through the turn `turnId`, wait for its answer. */
export function durableElicitation(ctx: Context, call: { turnId: string; callId: string; server: string; timeoutMs?: number }): ElicitHook {
  let asked = 0;
  return async ({ message: text, requestedSchema }) => {
    asked += 1;
    if (JSON.stringify(requestedSchema ?? {}).length > MAX_SCHEMA_CHARS) return { action: 'decline' };
    const message = text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text;
    const key = `${call.callId}#e${asked}`;
    const turn = ctx.client.workflow.getHandle(call.turnId);
    let answer = await turn.query(mcpAnswerQuery, key);
    if (answer === undefined) {
      await turn.signal(mcpQuestionSignal, { key, callId: call.callId, server: call.server, message, requestedSchema });
      // Polls back off to a query every two seconds: a human answers in seconds or hours. Nobody
      // answering within the session's ask_user timeout cancels the question (the turn drops it).
      const deadline = Date.now() + (call.timeoutMs ?? Number.POSITIVE_INFINITY);
      for (let wait = FIRST_POLL_MS; answer === undefined; wait = Math.min(MAX_POLL_MS, wait * 2)) {
        if (Date.now() >= deadline) return { action: 'cancel' };
        ctx.heartbeat();
        await ctx.sleep(wait); // rejects when the activity is cancelled
        answer = await turn.query(mcpAnswerQuery, key);
      }
    }
    return elicitationResult(requestedSchema, answer);
  };
}
