import { describe, expect, it } from 'vitest';
import { headEnd, limitTokens, pairsIntact, planContext, splitByPlan, tailStart, type CompressionConfig } from '../../../deterministic/context/plan';
import type { ChatMessage } from '../../../deterministic/types';

const config: CompressionConfig = { contextWindow: 1_000, threshold: 0.5, outputReserve: 200, keepTail: 3 };

const sys: ChatMessage = { role: 'system', content: 'system' };
const goal: ChatMessage = { role: 'user', content: 'the goal' };
const asst = (id: string, ...ids: string[]): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: [id, ...ids].map((i) => ({ id: i, name: 'read_file', arguments: '{}' })),
});
const tool = (id: string): ChatMessage => ({ role: 'tool', tool_call_id: id, content: `result ${id}` });

describe('planContext', () => {
  it('uses a fraction of the window minus the output reserve as the limit', () => {
    expect(limitTokens(config)).toBe(400);
  });

  it('takes a threshold above 1 as an absolute token count capped at the usable budget', () => {
    expect(limitTokens({ ...config, threshold: 300 })).toBe(300);
    expect(limitTokens({ ...config, threshold: 5_000 })).toBe(800);
  });

  it('triggers only when the total is above the limit', () => {
    const messages = [sys, goal, asst('a'), tool('a')];
    expect(planContext(messages, [100, 100, 100, 100], config).compress).toBe(false);
    expect(planContext(messages, [100, 100, 100, 101], config).compress).toBe(true);
  });

  it('keeps the system messages and the first user message as the head', () => {
    const messages = [sys, goal, asst('a'), tool('a'), { role: 'user', content: 'later' } as ChatMessage];
    expect(headEnd(messages)).toBe(2);
    expect(headEnd([sys, sys])).toBe(2);
  });

  it('moves the tail boundary back so an assistant message is never split from its tool results', () => {
    const messages = [sys, goal, asst('a'), tool('a'), asst('b', 'c'), tool('b'), tool('c')];
    // The last 2 messages would start at a tool result: the boundary moves to the assistant.
    expect(tailStart(messages, 2, headEnd(messages))).toBe(4);
    const plan = planContext(messages, messages.map(() => 100), { ...config, keepTail: 2 });
    const { head, middle, tail } = splitByPlan(messages, plan);
    expect(head).toEqual([sys, goal]);
    expect(middle).toEqual([asst('a'), tool('a')]);
    expect(tail[0]).toEqual(asst('b', 'c'));
    expect(pairsIntact([...head, ...tail])).toBe(true);
  });

  it('never lets the tail reach into the head', () => {
    const messages = [sys, goal, asst('a'), tool('a')];
    const plan = planContext(messages, [1, 1, 1, 1], { ...config, keepTail: 50 });
    expect(plan.headEnd).toBe(2);
    expect(plan.tailStart).toBe(2);
    expect(plan.middleTokens).toBe(0);
  });

  it('detects a tool result whose assistant message is missing', () => {
    expect(pairsIntact([sys, goal, tool('x')])).toBe(false);
    expect(pairsIntact([sys, goal, asst('x'), tool('x')])).toBe(true);
  });

  it('rejects counts that do not match the messages', () => {
    expect(() => planContext([sys, goal], [1], config)).toThrow(/1 counts for 2 messages/);
  });
});
