/**
 * `harness status` of a session whose first turn waits: the turn's tokens are not yet the
 * session's, so the facts line counts them with the session's rather than say 0 beside them.
 */
import { describe, expect, it } from 'vitest';
import { statusLines } from '../../cli/actions/inspect';
import type { SessionView } from '../../client/session-status';
import type { TurnProgress } from '../../client/watch/progress';

const waiting = { sessionId: 's-1', status: 'waiting_for_approval', model: 'gpt-4o-mini', turnCount: 0, messageCount: 0, usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, currentTurnId: 's-1/turn-1' } as unknown as SessionView;
const progress = { turn_id: 's-1/turn-1', step: 1, model_calls: 1, tool_calls: 0, usage: { prompt_tokens: 700, completion_tokens: 86, total_tokens: 786 } } as TurnProgress;

describe('status lines', () => {
  it('count the running turn and its tokens with the session\'s', () => {
    const facts = statusLines(waiting, progress)[1];
    expect(facts).toBe('model gpt-4o-mini · 0 turn(s) done, 1 running · 0 message(s) · 786 tokens (700 prompt, 86 completion), the running turn\'s included');
  });

  it('with no turn running, say the session\'s own', () => {
    const idle = { ...waiting, status: 'idle', turnCount: 2, messageCount: 5, usage: { prompt_tokens: 900, completion_tokens: 100, total_tokens: 1000 }, currentTurnId: undefined } as SessionView;
    expect(statusLines(idle)[1]).toBe('model gpt-4o-mini · 2 turn(s) · 5 message(s) · 1000 tokens (900 prompt, 100 completion)');
  });
});
