/**
 * Budgets and costs from the command line, each step a separate process, under the default
 * policy (mode ask): `run` without a terminal leaves a turn waiting for its budget (exit 3, the
 * commands to raise or stop it printed); `status` shows the wait and what the session cost;
 * `approve --budget +N` from another process raises it and the turn finishes; `deny` stops
 * another turn, which ends budget_exceeded with its work kept; `cost`, `status --json` and
 * `trace --json` tell the same cost.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir, writeScript, type CliResult } from '../support/cli';

let h: TestHarness;
let dir: string;
let env: NodeJS.ProcessEnv;
let configFile: string;
const cli = (args: string[]) => runCli(args, { env, cwd: dir, timeoutMs: 90_000 });

// Step 1 writes ~2,000 characters (~500 completion tokens), so step 2's call (its context plus a
// 100-token reply) would pass a 1,000-token turn budget while step 1's does not.
const script = {
  steps: [
    { content: 'x'.repeat(2000), tool_calls: [{ name: 'get_current_time', arguments: {} }] },
    { content: 'Done. HARNESS_OK' },
  ],
};

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-cli-budget-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home') });
  configFile = path.join(dir, 'budget.config.json');
  writeFileSync(
    configFile,
    JSON.stringify({ prices: { scripted: { input: 2, output: 8 } }, limits: { maxOutputTokens: 100, budget: { turn: { tokens: 1000 } } } }),
  );
});
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

/** `run --json` of the script with the budget config; expects the turn to wait (exit 3). */
async function runWaiting(sessionId: string): Promise<CliResult> {
  const file = writeScript(dir, script);
  const r = await cli(['run', '--model', `scripted:${file}`, '--config', configFile, 'What time is it?', '--json', '--session', sessionId]);
  expect(r.code, describeResult(r)).toBe(3);
  return r;
}

describe('a turn waiting for its budget, decided from other processes', () => {
  const sessionId = newSessionId('cli-budget');

  it('`run` without a terminal exits 3 with the budget wait and the commands that decide it', async () => {
    const r = await runWaiting(sessionId);
    expect(parseJson(r)).toMatchObject({
      session_id: sessionId,
      workflow_id: `${sessionId}/turn-1`,
      status: 'waiting_for_budget',
      pending: { kind: 'budget', scope: 'turn', unit: 'tokens', limit: 1000, step: 2 },
    });
    expect(r.stderr).toMatch(/waiting for budget: the turn's budget of 1,000 tokens is reached/);
    expect(r.stderr).toContain(`harness approve ${sessionId} --budget +<tokens>`);
    expect(r.stderr).toContain(`harness deny ${sessionId} --reason`);
    expect(stackLines(r.stderr)).toEqual([]);
  });

  it('`status` shows the wait and what the session cost so far', async () => {
    await expect
      .poll(async () => parseJson<{ status: string }>(await cli(['status', sessionId, '--json'])).status, { timeout: 20_000, interval: 250 })
      .toBe('waiting_for_budget');
    const r = await cli(['status', sessionId]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toContain(`session ${sessionId}: waiting_for_budget`);
    expect(r.stdout).toMatch(/^pending budget: the turn's budget of 1,000 tokens is reached: \d+ tokens spent/m);
    expect(r.stdout).toMatch(/^cost \$0\.00\d+ · \d+ tokens: 1 model call/m);
  });

  it('a raise in the wrong unit is a usage error that changes nothing', async () => {
    const r = await cli(['approve', sessionId, '--budget', '+$1']);
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.errLines[0]).toMatch(/^error: the turn waits for its turn budget in tokens/);
    expect(r.errLines.some((l) => /^hint: e\.g\. harness approve .* --budget \+5000/.test(l))).toBe(true);
    const bad = await cli(['approve', sessionId, '--budget', '+1.5']);
    expect(bad.code, describeResult(bad)).toBe(2);
  });

  it('`approve --budget +5000` from another process raises it and the turn finishes', async () => {
    const r = await cli(['approve', sessionId, '--budget', '+5000', '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r)).toMatchObject({ session_id: sessionId, terminated_by: 'final_answer', answer: 'Done. HARNESS_OK', steps: 2 });
  });

  it('`cost`, `status --json` and `trace --json` tell the same cost', async () => {
    const cost = await cli(['cost', sessionId, '--json']);
    expect(cost.code, describeResult(cost)).toBe(0);
    const ledger = parseJson<{ total: { usd: number; total_tokens: number; calls: number }; turns: { pricing: { source: string } }[] }>(cost);
    expect(ledger.total.calls).toBe(2);
    expect(ledger.total.usd).toBeGreaterThan(0);
    expect(ledger.turns[0]!.pricing).toMatchObject({ model: 'scripted', price: { input: 2, output: 8 }, source: 'config' });
    const status = parseJson<{ cost: { usd: number; total_tokens: number } }>(await cli(['status', sessionId, '--json']));
    expect(status.cost).toMatchObject({ usd: ledger.total.usd, total_tokens: ledger.total.total_tokens });
    const trace = await cli(['trace', sessionId, '--json']);
    const spans = trace.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; output: Record<string, unknown> | null; input: Record<string, unknown> });
    const turn = spans.find((s) => s.type === 'turn')!;
    expect(turn.output!.cost).toMatchObject({ usd: ledger.total.usd, total_tokens: ledger.total.total_tokens });
    const llm = spans.filter((s) => s.type === 'llm_call').map((s) => (s.output!.cost as { usd: number }).usd);
    expect(llm.reduce((a, b) => a + b, 0)).toBeCloseTo(ledger.total.usd, 12);
    // The wait is a span of step 2: raised by 5,000 tokens, by the CLI's identity.
    expect(spans.find((s) => s.type === 'budget')).toMatchObject({ input: { scope: 'turn', unit: 'tokens', limit: 1000 }, output: { decision: 'raised', raised_by: 5000 } });
    const text = await cli(['cost', sessionId]);
    expect(text.stdout).toMatch(new RegExp(`^session ${sessionId} · 1 turn · \\$0\\.00\\d+`));
    expect(text.stdout).toMatch(/priced: scripted: \$2 in \/ \$8 out per million tokens \(config\)/);
  });
});

describe('`deny` on a budget wait', () => {
  const sessionId = newSessionId('cli-budget-deny');

  it('stops the turn: budget_exceeded, its work kept, and the session goes on', async () => {
    await runWaiting(sessionId);
    await expect
      .poll(async () => parseJson<{ status: string }>(await cli(['status', sessionId, '--json'])).status, { timeout: 20_000, interval: 250 })
      .toBe('waiting_for_budget');
    const r = await cli(['deny', sessionId, '--reason', 'too dear', '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    const out = parseJson<{ terminated_by: string; steps: number; answer: string }>(r);
    expect(out).toMatchObject({ terminated_by: 'budget_exceeded', steps: 1 });
    expect(out.answer).toMatch(/Stopped by a person: too dear/);
    const s = parseJson<{ status: string; last_turn: { terminated_by: string }; message_count: number }>(await cli(['status', sessionId, '--json']));
    expect(s).toMatchObject({ status: 'idle', last_turn: { terminated_by: 'budget_exceeded' } });
    // The user message, the reply with its call and the call's result are kept.
    expect(s.message_count).toBeGreaterThanOrEqual(3);
  });
});
