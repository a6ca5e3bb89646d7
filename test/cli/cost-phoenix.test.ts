/**
 * A session's cost in the real Arize Phoenix: `harness trace --otlp` sends each model call's
 * cost as OpenInference's `llm.cost.*` (read back through Phoenix's REST API, equal to the
 * ledger's), and the token counts, model and provider Phoenix prices with: given the same price
 * in its model table, Phoenix's own cost of the trace (its GraphQL API, what its UI shows) is
 * non-zero and the ledger's.
 */
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionConfig } from '../../deterministic/session-config';
import { loadLedger } from '../../history/ledger/load';
import { traceId } from '../../history/trace/types';
import { usd } from '../../deterministic/pricing';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, removeTempDirs, runCli, stopChild, tempDir } from '../support/cli';
import { phoenixGraphql, phoenixSpans, startPhoenix, type Phoenix } from '../support/phoenix';

let h: TestHarness;
let phoenix: Phoenix;
let env: NodeJS.ProcessEnv;
const sessionId = newSessionId('cost-phoenix');
const PRICE = { input: 2, output: 8 };

beforeAll(async () => {
  [h, phoenix] = await Promise.all([startHarness(), startPhoenix()]);
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(tempDir('harness-cli-cost-'), 'home') });
  const config: SessionConfig = {
    ...scriptedConfig({ steps: [{ tool_calls: [{ name: 'get_current_time', arguments: {} }] }, { content: `It is now. ${'x'.repeat(400)}` }] }, {}, DEFAULT_POLICY),
    pricing: { model: 'scripted', price: PRICE, source: 'config' },
  };
  expect((await h.finish(sessionId, config, 'What time is it?')).terminated_by).toBe('final_answer');
  // Phoenix prices spans as they arrive, from its own model table (refreshed every 5 s).
  await phoenixGraphql(
    phoenix,
    `mutation($input: CreateModelMutationInput!) { createModel(input: $input) { model { id } } }`,
    {
      input: {
        name: 'scripted',
        namePattern: '^scripted$',
        costs: [
          { tokenType: 'input', costPerMillionTokens: PRICE.input, kind: 'PROMPT' },
          { tokenType: 'output', costPerMillionTokens: PRICE.output, kind: 'COMPLETION' },
        ],
      },
    },
  );
  await sleep(7_000);
}, 180_000);
afterAll(async () => {
  await stopChild(phoenix?.child, 'SIGTERM');
  await h?.stop();
  removeTempDirs();
});

describe('costs in Phoenix', () => {
  it('a trace exported to Phoenix carries the ledger cost, and Phoenix prices it the same', async () => {
    const r = await runCli(['trace', sessionId, '--otlp', phoenix.base], { env, timeoutMs: 60_000 });
    expect(r.code, describeResult(r)).toBe(0);
    const ledger = await loadLedger(h.client, sessionId);
    expect(ledger.total.nanoUsd).toBeGreaterThan(0);
    const trace = traceId(sessionId);
    const spans = await phoenixSpans(phoenix, trace, 6);

    // Read back through the REST API: each model call's cost, as the ledger has it.
    const llm = spans.filter((s) => s.span_kind === 'LLM');
    expect(llm).toHaveLength(2);
    const costs = llm.map((s) => s.attributes['llm.cost.total'] as number);
    for (const c of costs) expect(c).toBeGreaterThan(0);
    expect(costs.reduce((a, b) => a + b, 0)).toBeCloseTo(usd(ledger.total.nanoUsd!), 12);
    for (const s of llm) expect((s.attributes['llm.cost.prompt'] as number) + (s.attributes['llm.cost.completion'] as number)).toBeCloseTo(s.attributes['llm.cost.total'] as number, 12);
    const turn = spans.find((s) => s.span_kind === 'AGENT')!;
    expect(turn.attributes['harness.cost.total_usd']).toBeCloseTo(usd(ledger.total.nanoUsd!), 12);

    // Phoenix's own cost of the trace (GraphQL; what its UI shows), from the tokens and model we sent.
    let cost: number | null = null;
    for (let i = 0; i < 40 && !cost; i++) {
      const data = await phoenixGraphql<{ projects: { edges: { node: { trace: { costSummary: { total: { cost: number | null } } } | null } }[] } }>(
        phoenix,
        `query($id: ID!) { projects { edges { node { trace(traceId: $id) { costSummary { total { cost } } } } } } }`,
        { id: trace },
      );
      cost = data.projects.edges.map((e) => e.node.trace?.costSummary.total.cost ?? null).find((c) => c !== null) ?? null;
      if (!cost) await sleep(250);
    }
    expect(cost).toBeGreaterThan(0);
    expect(cost!).toBeCloseTo(usd(ledger.total.nanoUsd!), 9);
  });
});
