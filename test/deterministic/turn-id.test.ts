import { describe, expect, it } from 'vitest';
import {
  formatTurnId,
  isAgentTurnId,
  isAnyTurnId,
  isTurnId,
  parseAgentTurnId,
  parseAnyTurnId,
  parseTurnId,
  rootTurnId,
  sessionOfTurnId,
  subAgentTurnId,
  turnNumberOf,
} from '../../deterministic/turn-id';

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

  it("parses a sub-agent's turn id, nested or not, as a turn of its session hanging from its parent turn", () => {
    const child = subAgentTurnId('s-1/turn-3', 't3-s2-c0');
    expect(child).toBe('s-1/turn-3/agent-t3-s2-c0');
    const parts = { sessionId: 's-1', turn: 3, rootTurnId: 's-1/turn-3', parentTurnId: 's-1/turn-3', callId: 't3-s2-c0', depth: 1 };
    expect(parseAgentTurnId(child)).toEqual(parts);
    expect(parseAgentTurnId(child, { strict: true })).toEqual(parts);
    expect(parseAnyTurnId(child, { strict: true })).toEqual({ sessionId: 's-1', turn: 3, agent: parts });
    expect(isAgentTurnId(child, { strict: true })).toBe(true);
    expect(isAnyTurnId(child, { strict: true })).toBe(true);
    const nested = subAgentTurnId(child, 't3-s1-c1');
    expect(parseAgentTurnId(nested, { strict: true })).toEqual({ ...parts, parentTurnId: child, callId: 't3-s1-c1', depth: 2 });
    expect(rootTurnId(nested)).toBe('s-1/turn-3');
    // A session's turn is any turn, and no sub-agent's.
    expect(parseAnyTurnId('s-1/turn-3', { strict: true })).toEqual({ sessionId: 's-1', turn: 3 });
    expect(isAgentTurnId('s-1/turn-3')).toBe(false);
    expect(isAnyTurnId('s-1/turn-3')).toBe(true);
  });

  it.each([
    's-1',
    's-1/agent-t1-s1-c0',
    's-1/turn-1/agent-',
    's-1/turn-1/agent-t1/x',
    's-1/turn-1/agents-t1-s1-c0',
    's-1/turn-1/Agent-t1-s1-c0',
    's-1/turn-1/agent-t1-s1-c0/',
    's-1/turn-1/agent-t1-s1-c0/turn-2',
    'turn-1/agent-t1-s1-c0',
    '/turn-1/agent-t1-s1-c0',
    's-1/turn-x/agent-t1-s1-c0',
    's-1/turn-1/agent-t1-s1-c0/agent-',
  ])("%j is no sub-agent's turn id", (id) => {
    expect(parseAgentTurnId(id)).toBeUndefined();
    expect(parseAgentTurnId(id, { strict: true })).toBeUndefined();
    expect(isAgentTurnId(id)).toBe(false);
  });

  it("reads any call id and turn digits from history, but a person must name a sub-agent's turn as the harness makes it", () => {
    for (const id of ['s/turn-0/agent-t1-s1-c0', 's/turn-1/agent-t1 s1', 's/turn-1/agent-.x', 's/turn-1/agent-ok/agent-b@d']) {
      expect(parseAgentTurnId(id), id).toBeDefined();
      expect(parseAgentTurnId(id, { strict: true }), id).toBeUndefined();
      expect(parseAnyTurnId(id, { strict: true }), id).toBeUndefined();
    }
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
