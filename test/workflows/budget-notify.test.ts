/**
 * A turn that waits for a budget decision is a wait on a person like an approval: its session's
 * webhook gets a signed `budget` event with what a person decides on (the budget, spent, limit,
 * the call's estimate) and how to decide it, and `pending()` / `harness pending` list it beside
 * approvals and questions. Raised by the ids the event carried, the turn finishes and its
 * turn-end event follows.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decideBudget } from '../../client/budget-client';
import { listPending, type PendingBudgetItem } from '../../client/pending';
import { waitForTurn } from '../../client/turn-wait';
import type { SessionConfig } from '../../deterministic/session-config';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, parseJson, removeTempDirs, runCli, tempDir } from '../support/cli';
import { Receiver, signedWith } from '../support/webhook-receiver';

const SECRET = 'budget-webhook-secret';
let h: TestHarness;
let hook: Receiver;

beforeAll(async () => {
  h = await startHarness({ env: { WEBHOOK_SECRET: SECRET } });
  hook = new Receiver();
  await hook.start();
  h.declarations.add({ webhooks: [{ url: hook.url, secret: 'env:WEBHOOK_SECRET' }] });
});
afterAll(async () => {
  await h?.stop();
  await hook?.stop();
  removeTempDirs();
});

// Step 1 writes ~2,000 characters (~500 completion tokens): the next call's estimate then passes a
// 1,000-token turn budget, while the first call's does not (as test/workflows/budget.test.ts).
const steps = [
  { content: 'x'.repeat(2000), tool_calls: [{ name: 'get_current_time', arguments: {} }] },
  { tool_calls: [{ name: 'get_current_time', arguments: { timezone: 'UTC' } }] },
  { content: 'Done within budget.' },
];

describe('a budget wait', () => {
  it('posts a budget event, is listed by pending() and `harness pending`, and once raised the turn ends and says so', async () => {
    const sessionId = newSessionId('budget-hook');
    const config: SessionConfig = {
      ...scriptedConfig({ steps }, { maxOutputTokens: 100, budget: { turn: { tokens: 1000 } } }, DEFAULT_POLICY),
      notify: { url: hook.url, retryInitialMs: 100 },
    };
    const out = await h.turn(sessionId, config, 'What time is it?');
    expect(out.kind).toBe('waiting');
    if (out.kind !== 'waiting' || out.state.pending?.kind !== 'budget') throw new Error(`not a budget wait: ${JSON.stringify(out)}`);
    const { spent, estimate } = out.state.pending;
    const turnId = `${sessionId}/turn-1`;

    // The event: signed, its id the same on every attempt, with the numbers and the commands.
    await expect.poll(() => hook.ofKind('budget').length, { timeout: 15_000, interval: 50 }).toBe(1);
    const [event] = hook.ofKind('budget');
    expect(signedWith(SECRET, event!)).toBe(true);
    expect(event!.body).toMatchObject({
      kind: 'budget',
      event_id: `${turnId}/budget/step-2-turn-tokens-1000`,
      session_id: sessionId,
      turn_id: turnId,
      scope: 'turn',
      unit: 'tokens',
      limit: 1000,
      spent,
      estimate,
      step: 2,
    });
    expect(event!.headers['x-harness-event-id']).toBe(event!.body.event_id);
    expect(event!.body.summary).toMatch(/^the turn's budget of 1,000 tokens is reached: [\d,]+ tokens spent/);
    expect(event!.body.decide).toContain(`harness approve ${sessionId} --budget +5000`);
    expect(event!.body.decide).toContain(`harness deny ${sessionId}`);

    // pending(): the budget wait, with what to decide and how.
    let items: PendingBudgetItem[] = [];
    await expect
      .poll(async () => (items = (await listPending(h.client, { taskQueue: h.taskQueue })).filter((i): i is PendingBudgetItem => i.sessionId === sessionId)).length, {
        timeout: 20_000,
        interval: 200,
      })
      .toBe(1);
    expect(items[0]).toMatchObject({ kind: 'budget', sessionId, turnId, taskQueue: h.taskQueue, scope: 'turn', unit: 'tokens', limit: 1000, spent, estimate, step: 2 });
    expect(Date.parse(items[0]!.since)).toBeGreaterThan(0);
    expect(items[0]!.decide).toContain(`harness approve ${sessionId} --budget +5000`);

    // `harness pending`: the same as snake_case JSON, and a line naming the budget reached.
    const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_HOME: tempDir('harness-budget-pending-') });
    const json = await runCli(['pending', '--task-queue', h.taskQueue, '--json'], { env });
    expect(json.code).toBe(0);
    expect(parseJson<Array<Record<string, unknown>>>(json).filter((i) => i.session_id === sessionId)).toEqual([
      expect.objectContaining({ kind: 'budget', turn_id: turnId, scope: 'turn', unit: 'tokens', limit: 1000, spent, estimate, step: 2 }),
    ]);
    const lines = await runCli(['pending', '--task-queue', h.taskQueue], { env });
    expect(lines.code).toBe(0);
    expect(lines.stdout).toContain(`${sessionId}\tbudget turn\tthe turn's budget of 1,000 tokens is reached: `);
    expect(lines.errLines.at(-1)).toContain('a budget: `harness approve <session> --budget +N` or `harness deny <session>`');

    // Raised by the session's id, as the event said: the turn finishes, its end is posted, nothing is pending.
    await decideBudget(h.client, sessionId, { raise: { unit: 'tokens', amount: 5000 } });
    const done = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(done.kind === 'done' && done.result.terminated_by).toBe('final_answer');
    await expect.poll(() => hook.ofKind('turn_end').length, { timeout: 15_000, interval: 50 }).toBe(1);
    expect(hook.ofKind('budget')).toHaveLength(1);
    expect((await listPending(h.client, { taskQueue: h.taskQueue })).filter((i) => i.sessionId === sessionId)).toEqual([]);
  }, 90_000);
});
