/**
 * The cost ledger from real histories: a model call retried after HTTP 500s is counted once,
 * its failed attempts as retry waste (with the tokens the provider reported for them); a
 * session's cost is the sum of its turns' across continue-as-new, and equals what the
 * workflow itself tallied; the same function prices an eval run's trials.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionConfig } from '../../deterministic/session-config';
import { sessionState } from '../../client/session-client';
import { loadLedger } from '../../history/ledger/load';
import { ledgerJson, ledgerLines } from '../../history/ledger/render';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
  if (h?.home) rmSync(h.home, { recursive: true, force: true });
});

const PRICE = { input: 2, cachedInput: 1, output: 8 };
const priced = (script: unknown, limits: Partial<SessionConfig['limits']> = {}): SessionConfig => ({
  ...scriptedConfig(script, limits, DEFAULT_POLICY),
  pricing: { model: 'scripted', price: PRICE, source: 'config' },
});
const nanos = (u: { prompt_tokens: number; completion_tokens: number }) => u.prompt_tokens * 2000 + u.completion_tokens * 8000;

describe('ledger', () => {
  it('counts a call retried after 500s once and its failed attempts as waste, with the tokens they reported', async () => {
    const sessionId = newSessionId('ledger-500');
    const script = {
      steps: [
        { fault: { status: 500, times: 2, usage: { prompt_tokens: 40, completion_tokens: 5 } }, tool_calls: [{ name: 'get_current_time', arguments: {} }] },
        { fault: { status: 503, times: 1 }, content: 'It is now.' },
      ],
    };
    const r = await h.finish(sessionId, priced(script), 'What time is it?');
    expect(r.terminated_by).toBe('final_answer');
    const ledger = await loadLedger(h.client, r.turnId);
    const [turn] = (await loadLedger(h.client, r.turnId, { calls: true })).turns;
    expect(turn!.entries.map((e) => [e.kind, e.attempts, e.wasted?.total_tokens])).toEqual([
      ['model', 3, 90],
      ['model', 2, undefined],
    ]);
    // Each successful reply once: the model heading is exactly the turn's usage.
    expect(ledger.byKind.model).toMatchObject({ calls: 2, total_tokens: r.usage.total_tokens, nanoUsd: nanos(r.usage) });
    // Three failed attempts; two of them reported 45 tokens each.
    expect(ledger.byKind.retry_waste).toMatchObject({ calls: 3, prompt_tokens: 80, completion_tokens: 10, total_tokens: 90, nanoUsd: 80 * 2000 + 10 * 8000 });
    expect(ledger.total.total_tokens).toBe(r.usage.total_tokens + 90);
    // The workflow charged the same: its spend is the ledger's total, to the nano-dollar.
    expect(r.spend).toEqual({ tokens: ledger.total.total_tokens, nanoUsd: ledger.total.nanoUsd });
    expect(ledgerJson(ledger).by_kind.retry_waste).toMatchObject({ calls: 3, total_tokens: 90, usd: 0.00024 });
    expect(ledgerLines(ledger).join('\n')).toMatch(/retry waste\s+3 attempts · 90 tokens/);
    // The tally the closed turn recorded (read from its close event) is what its events give.
    const recorded = await loadLedger(h.client, r.turnId, { calls: false });
    const scanned = await loadLedger(h.client, r.turnId, { calls: true });
    expect(recorded.turns[0]!.entries).toBeUndefined();
    expect(scanned.turns[0]!.entries).toHaveLength(2);
    expect({ ...recorded, turns: [] }).toEqual({ ...scanned, turns: [] });
  });

  it('a call that fails for good is all waste, its attempts and reported tokens from its failure, recorded as history tells it', async () => {
    const sessionId = newSessionId('ledger-fail');
    const script = { steps: [{ fault: { status: 503, times: 2, usage: { prompt_tokens: 30, completion_tokens: 0 } }, content: 'never' }] };
    const r = await h.finish(sessionId, priced(script, { modelMaxAttempts: 2, modelRetryWindowMs: 0 }), 'Hello?');
    expect(r.terminated_by).toBe('failed');
    const scanned = await loadLedger(h.client, r.turnId, { calls: true });
    expect(scanned.turns[0]!.entries).toEqual([expect.objectContaining({ kind: 'model', attempts: 2, wasted: expect.objectContaining({ total_tokens: 60 }) })]);
    expect(scanned.byKind.retry_waste).toMatchObject({ calls: 2, total_tokens: 60, nanoUsd: 60 * 2000 });
    expect(scanned.byKind.model.calls).toBe(0);
    const recorded = await loadLedger(h.client, r.turnId);
    expect(r.ledger?.exact).toBe(true);
    expect({ ...recorded, turns: [] }).toEqual({ ...scanned, turns: [] });
  });

  it("a session's cost is the sum of its turns' across continue-as-new, and what the session tallied", async () => {
    const sessionId = newSessionId('ledger-can');
    const step = (i: number) => [{ tool_calls: [{ name: 'get_current_time', arguments: { timezone: 'UTC' } }] }, { content: `turn ${i} done` }];
    const script = { steps: [...step(1), ...step(2), ...step(3), ...step(4)] };
    // A low threshold: the session continues as new between turns.
    const cfg = priced(script, { continueAsNewAfterEvents: 10 });
    for (let i = 1; i <= 4; i++) expect((await h.finish(sessionId, cfg, `Turn ${i}.`)).terminated_by).toBe('final_answer');
    const runs: string[] = [];
    for await (const wf of h.client.workflow.list({ query: `WorkflowId = '${sessionId}'` })) runs.push(wf.runId);
    expect(runs.length).toBeGreaterThan(1);
    const session = await loadLedger(h.client, sessionId);
    expect(session.turns.map((t) => t.turnId)).toEqual([1, 2, 3, 4].map((i) => `${sessionId}/turn-${i}`));
    const turns = await Promise.all(session.turns.map((t) => loadLedger(h.client, t.turnId)));
    expect(session.total.total_tokens).toBe(turns.reduce((n, t) => n + t.total.total_tokens, 0));
    expect(session.total.nanoUsd).toBe(turns.reduce((n, t) => n + t.total.nanoUsd!, 0));
    expect(session.total.calls).toBe(8);
    const state = await sessionState(h.client, sessionId);
    expect(state.spend).toEqual({ tokens: session.total.total_tokens, nanoUsd: session.total.nanoUsd });
    expect(session.byModel.scripted).toEqual(session.total);
    const scanned = await loadLedger(h.client, sessionId, { calls: true });
    expect(scanned.total).toEqual(session.total);
    expect(scanned.byKind).toEqual(session.byKind);
  });
});
