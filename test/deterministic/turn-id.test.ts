import { describe, expect, it } from 'vitest';
import { formatTurnId, isTurnId, parseTurnId, sessionOfTurnId, turnNumberOf } from '../../deterministic/turn-id';

describe('turn ids', () => {
  it.each([
    ['s-1', 1],
    ['my.session_2', 17],
    ['eval-abc.case-3.t1', 1],
    // A session id is anything before the last `/turn-<n>`.
    ['a/turn-2', 3],
    ['x', 123_456],
  ])('%s turn %i: format and parse round-trip', (sessionId, turn) => {
    const id = formatTurnId(sessionId, turn);
    expect(id).toBe(`${sessionId}/turn-${turn}`);
    expect(parseTurnId(id)).toEqual({ sessionId, turn });
    expect(parseTurnId(id, { strict: true })).toEqual({ sessionId, turn });
    expect(formatTurnId(parseTurnId(id)!.sessionId, parseTurnId(id)!.turn)).toBe(id);
    expect(isTurnId(id)).toBe(true);
    expect(sessionOfTurnId(id)).toBe(sessionId);
    expect(turnNumberOf(id)).toBe(turn);
  });

  it.each(['', 's-1', 'turn-1', '/turn-1', 's/turn-', 's/turn-x', 's/turn-1x', 's/turn--1', 's/turn-1.5', 's/turn-1/', 's/Turn-1', 's/turn 1', 's\\turn-1', 's/turn-1\n'])(
    '%j is no turn id',
    (id) => {
      expect(parseTurnId(id)).toBeUndefined();
      expect(parseTurnId(id, { strict: true })).toBeUndefined();
      expect(isTurnId(id)).toBe(false);
      // Any other id names itself: a session id is its own session.
      expect(sessionOfTurnId(id)).toBe(id);
      expect(turnNumberOf(id)).toBe(0);
    },
  );

  it("reads a sub-agent's turn id as belonging to the session and turn it hangs from (though it is no turn id itself)", () => {
    const child = 's-1/turn-3/agent-t3-s2-c0';
    expect(parseTurnId(child)).toBeUndefined();
    expect(sessionOfTurnId(child)).toBe('s-1');
    expect(turnNumberOf(child)).toBe(3);
    expect(sessionOfTurnId(`${child}/agent-t1-s1-c1`)).toBe('s-1');
    expect(sessionOfTurnId('s-1/agent-x')).toBe('s-1/agent-x');
  });

  it('reads any digits from history, but a person must name a turn from 1 without leading zeros', () => {
    expect(parseTurnId('s/turn-0')).toEqual({ sessionId: 's', turn: 0 });
    expect(parseTurnId('s/turn-007')).toEqual({ sessionId: 's', turn: 7 });
    expect(parseTurnId('s/turn-0', { strict: true })).toBeUndefined();
    expect(parseTurnId('s/turn-007', { strict: true })).toBeUndefined();
    expect(isTurnId('s/turn-0', { strict: true })).toBe(false);
    expect(parseTurnId('s/turn-10', { strict: true })).toEqual({ sessionId: 's', turn: 10 });
  });
});
