/**
 * Budgets through the real session and turn workflows under the default policy (mode ask): a
 * model call that would pass the turn's or the session's budget waits (`waiting_for_budget`,
 * shown by the session like an approval); a raise lets it go on, a stop or a timeout ends it
 * `budget_exceeded` with its work kept; what the turn spent equals what its calls used; a raise
 * of the session budget holds for later turns.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnResult } from '../../deterministic/session';
import type { SessionConfig } from '../../deterministic/session-config';
import type { SessionState } from '../../deterministic/session-state';
import { decideBudget } from '../../client/budget-client';
import { sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
  if (h?.home) rmSync(h.home, { recursive: true, force: true });
});

// Step 1 writes ~2,000 characters (~500 completion tokens): the next call's estimate (the last
// context plus a 100-token reply) then passes a 1,000-token budget, while the first call's does not.
const big = 'x'.repeat(2000);
const steps = [
  { content: big, tool_calls: [{ name: 'get_current_time', arguments: {} }] },
  { tool_calls: [{ name: 'get_current_time', arguments: { timezone: 'UTC' } }] },
  { content: 'Done within budget.' },
];
const config = (budget: NonNullable<SessionConfig['limits']['budget']>, limits: Partial<SessionConfig['limits']> = {}, script: unknown = { steps }): SessionConfig => ({
  ...scriptedConfig(script, { maxOutputTokens: 100, budget, ...limits }, DEFAULT_POLICY),
  pricing: { model: 'scripted', price: { input: 2, output: 8 }, source: 'config' },
});

/** Waits until the session shows the budget wait (the turn tells it by signal). */
async function waitingForBudget(sessionId: string): Promise<SessionState> {
  await expect.poll(async () => (await sessionState(h.client, sessionId)).status, { timeout: 20_000, interval: 50 }).toBe('waiting_for_budget');
  return sessionState(h.client, sessionId);
}

const result = (turnId: string) => h.client.workflow.getHandle(turnId).result() as Promise<TurnResult>;

describe('turn budgets', () => {
  it('waits when the next call would pass the turn budget, is raised and finishes; the spend is what the calls used', async () => {
    const sessionId = newSessionId('budget-raise');
    const out = await h.turn(sessionId, config({ turn: { tokens: 1000 } }), 'What time is it?');
    expect(out.kind).toBe('waiting');
    if (out.kind !== 'waiting') return;
    expect(out.state).toMatchObject({ status: 'waiting_for_budget', step: 2 });
    const pending = out.state.pending!;
    expect(pending).toMatchObject({ kind: 'budget', scope: 'turn', unit: 'tokens', limit: 1000 });
    if (pending.kind !== 'budget') return;
    expect(pending.spent).toBeGreaterThan(500);
    expect(pending.spent + pending.estimate).toBeGreaterThan(1000);
    const s = await waitingForBudget(sessionId);
    expect(s.pending).toEqual(pending);

    // A raise in the wrong unit is refused before anything is sent; the right one goes on.
    await expect(decideBudget(h.client, sessionId, { raise: { unit: 'usd', amount: 1 } })).rejects.toThrow(/in tokens/);
    const raised = await decideBudget(h.client, sessionId, { raise: { unit: 'tokens', amount: 5000 } });
    expect(raised.result).toEqual({ scope: 'turn', unit: 'tokens', limit: 6000 });
    const done = await waitForTurn(h.client, out.state.turnId);
    expect(done.kind).toBe('done');
    if (done.kind !== 'done') return;
    expect(done.result).toMatchObject({ terminated_by: 'final_answer', answer: 'Done within budget.', steps: 3 });
    // Nothing compressed or wasted: the spend is the calls' usage, priced at $2 / $8 per million.
    const u = done.result.usage;
    expect(done.result.spend).toEqual({ tokens: u.total_tokens, nanoUsd: u.prompt_tokens * 2000 + u.completion_tokens * 8000 });
    await expect.poll(async () => (await sessionState(h.client, sessionId)).spend, { timeout: 10_000 }).toEqual(done.result.spend);
  });

  it('a stopped turn ends budget_exceeded keeping its messages, and the session goes on from them', async () => {
    const sessionId = newSessionId('budget-stop');
    const cfg = config({ turn: { tokens: 1000 } });
    const out = await h.turn(sessionId, cfg, 'What time is it?');
    if (out.kind !== 'waiting') throw new Error('expected a budget wait');
    // The turn tells its session it waits by a signal: decide once the session shows it, as a person would.
    await waitingForBudget(sessionId);
    await decideBudget(h.client, sessionId, { stop: true, reason: 'too dear' });
    const r = await h.complete(await result(out.state.turnId));
    expect(r.terminated_by).toBe('budget_exceeded');
    expect(r.steps).toBe(1);
    expect(r.answer).toMatch(/budget of 1,000 tokens is reached.*Stopped by a person: too dear/);
    // The work of step 1 is kept: the call and its result are in the conversation.
    expect(r.messages!.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(r.toolCalls.map((c) => c.name)).toEqual(['get_current_time']);
    await expect.poll(async () => (await sessionState(h.client, sessionId)).status, { timeout: 10_000 }).toBe('idle');
    const s = await sessionState(h.client, sessionId);
    expect(s.lastTurn?.terminated_by).toBe('budget_exceeded');
  });

  it('nobody deciding within the approval timeout ends the turn budget_exceeded', async () => {
    const sessionId = newSessionId('budget-timeout');
    const out = await h.turn(sessionId, config({ turn: { usd: 0.000001 } }, { approvalTimeoutMs: 1500 }), 'What time is it?');
    if (out.kind !== 'waiting') throw new Error('expected a budget wait');
    // A millionth of a dollar does not cover even the first call's estimate.
    expect(out.state).toMatchObject({ step: 1, pending: { kind: 'budget', unit: 'usd', limit: 0.000001, spent: 0 } });
    const r = await result(out.state.turnId);
    expect(r).toMatchObject({ terminated_by: 'budget_exceeded', steps: 0 });
    expect(r.answer).toMatch(/Nobody raised it in time/);
  });

  it('the session budget counts every turn, and a raise of it holds for later turns', async () => {
    const sessionId = newSessionId('budget-session');
    const short = { steps: [{ content: `${big} one` }, { content: `${big} two` }, { content: `${big} three` }] };
    const cfg = config({ session: { tokens: 1000 } }, {}, short);
    const t1 = await h.finish(sessionId, cfg, 'First.');
    expect(t1.terminated_by).toBe('final_answer');
    // Turn 2's call would pass what is left of the session's budget.
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, text: 'Second.' });
    const s = await waitingForBudget(sessionId);
    expect(s.pending).toMatchObject({ kind: 'budget', scope: 'session', unit: 'tokens', limit: 1000, spent: t1.spend!.tokens });
    await decideBudget(h.client, sessionId, { raise: { unit: 'tokens', amount: 1500 } });
    const t2 = await waitForTurn(h.client, turnId);
    expect(t2.kind === 'done' && t2.result.sessionBudgetRaised).toEqual({ tokens: 1500 });
    // Turn 3 counts against 1,000 + 1,500, with both turns' spend behind it.
    const t3 = await h.turn(sessionId, cfg, 'Third.');
    if (t3.kind === 'waiting') expect(t3.state.pending).toMatchObject({ scope: 'session', limit: 2500 });
    else expect(t3.result.terminated_by).toBe('final_answer');
  });
});
