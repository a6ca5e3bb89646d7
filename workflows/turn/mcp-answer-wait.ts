/**
 * The turn's side of an MCP server's question (elicitation) as the activity holding the call
 * waits for its answer: an update that completes when the question is answered, or dropped when
 * its call ended, so the activity waits on Temporal's long poll of the update's outcome instead of
 * querying the turn again and again. The handler only waits on the turn's own state: it schedules
 * nothing (no timer, no command), so histories without the update replay unchanged and no patch
 * is needed. The activity keeps its own deadline (the session's ask_user timeout).
 */
import { HandlerUnfinishedPolicy } from '@temporalio/common';
import { condition, setHandler } from '@temporalio/workflow';
import { mcpAnswerWaitUpdate } from '../../deterministic/messages';

export interface McpAnswers {
  /** Whether the turn knows the question (asked, answered or dropped). */
  known(key: string): boolean;
  answer(key: string): string | undefined;
  dropped(key: string): boolean;
}

export function registerMcpAnswerWait(answers: McpAnswers): void {
  setHandler(
    mcpAnswerWaitUpdate,
    async (key) => {
      await condition(() => answers.answer(key) !== undefined || answers.dropped(key));
      const answer = answers.answer(key);
      return answer !== undefined ? { answer } : { dropped: true as const };
    },
    {
      // A key the turn never heard of is refused before anything is written to history.
      validator: (key) => {
        if (typeof key !== 'string' || !answers.known(key)) throw new Error(`no MCP server question ${JSON.stringify(key)} in this turn`);
      },
      // A wait the activity gave up on (its deadline, its cancellation) ends with the turn.
      unfinishedPolicy: HandlerUnfinishedPolicy.ABANDON,
    },
  );
}
