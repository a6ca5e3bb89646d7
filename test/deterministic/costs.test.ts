/**
 * Prices, money and budgets without a server: the price table (dated default, the config over it,
 * dated snapshots, local models free, unknown ones unpriced), nano-dollar arithmetic with cached
 * tokens, the budget check and its estimate, amounts as people type them, the config's zod
 * boundary, the provider's cached tokens read from its reply, and the ledger's counting.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { budgetBreach, callEstimate, NO_SPEND, spendOf } from '../../deterministic/budget';
import { costOf, nanoUsdOf, usdText } from '../../deterministic/pricing';
import { countEntries, emptyLedgerTally, ledgerEntries, totalOf } from '../../deterministic/ledger';
import { DEFAULT_PRICES, isLocal, lookupPrice, resolvePricing } from '../../config/prices';
import { parseBudgetAmount } from '../../config/budget-amount';
import { resolveSessionConfig } from '../../config/resolve';
import { UsageError } from '../../machine/errors';
import { OpenAIModelClient } from '../../activities/model/client';
import { boundedAnswer } from '../../activities/model/reply';

const price = { input: 2, cachedInput: 0.5, output: 8 };
const usage = (prompt: number, completion: number, cached?: number) => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, ...(cached ? { cached_tokens: cached } : {}) });

describe('prices', () => {
  it('looks a model up by name, a dated snapshot by its family, the longest family first', () => {
    expect(lookupPrice('gpt-4o-mini', DEFAULT_PRICES.models)?.key).toBe('gpt-4o-mini');
    expect(lookupPrice('gpt-4o-mini-2024-07-18', DEFAULT_PRICES.models)?.key).toBe('gpt-4o-mini');
    expect(lookupPrice('gpt-4o-2024-08-06', DEFAULT_PRICES.models)?.key).toBe('gpt-4o');
    expect(lookupPrice('gpt-4oo', DEFAULT_PRICES.models)).toBeUndefined();
    expect(DEFAULT_PRICES.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('prices from the config over the dated default; a local model is free unless priced; an unknown one has no price', () => {
    expect(resolvePricing({ provider: 'openai', model: 'gpt-4o-mini' }, undefined)).toMatchObject({ price: DEFAULT_PRICES.models['gpt-4o-mini'], source: `default table ${DEFAULT_PRICES.asOf}` });
    expect(resolvePricing({ provider: 'openai', model: 'gpt-4o-mini' }, { 'gpt-4o-mini': price })).toEqual({ model: 'gpt-4o-mini', price, source: 'config' });
    expect(resolvePricing({ provider: 'openai', model: 'llama3', baseUrl: 'http://127.0.0.1:8080/v1' }, undefined)).toEqual({ model: 'llama3', free: true, source: 'local model' });
    expect(resolvePricing({ provider: 'openai', model: 'llama3', baseUrl: 'http://127.0.0.1:8080/v1' }, { llama3: price })).toMatchObject({ price, source: 'config' });
    expect(resolvePricing({ provider: 'scripted', model: 'scripted', script: {} }, undefined)).toMatchObject({ free: true });
    expect(resolvePricing({ provider: 'openai', model: 'mystery-model', baseUrl: 'https://api.example.org/v1' }, undefined)).toEqual({ model: 'mystery-model', source: 'no price' });
    for (const url of ['http://localhost:1/v1', 'http://10.0.0.2/v1', 'http://192.168.1.9/v1', 'http://172.20.0.1/v1', 'http://[::1]:8080/v1', 'http://box.local/v1']) expect(isLocal({ provider: 'openai', model: 'm', baseUrl: url }), url).toBe(true);
    for (const url of ['https://api.openai.com/v1', 'http://172.32.0.1/v1', 'http://8.8.8.8/v1']) expect(isLocal({ provider: 'openai', model: 'm', baseUrl: url }), url).toBe(false);
  });

  it('counts money in whole nano-dollars, cached prompt tokens at the cached price, and never invents one', () => {
    expect(nanoUsdOf(usage(1000, 100), price)).toBe(1000 * 2000 + 100 * 8000);
    expect(nanoUsdOf(usage(1000, 100, 600), price)).toBe(400 * 2000 + 600 * 500 + 100 * 8000);
    expect(nanoUsdOf(usage(1000, 0, 600), { input: 2, output: 8 })).toBe(1000 * 2000);
    expect(costOf(usage(10, 10), { model: 'm', source: 'no price' })).toBeUndefined();
    expect(costOf(usage(10, 10), { model: 'm', free: true, source: 'local model' })).toBe(0);
    expect(usdText(0)).toBe('$0');
    expect(usdText(1_234_000)).toBe('$0.001234');
    expect(usdText(51_860_000_000)).toBe('$51.86');
  });
});

describe('budgets', () => {
  const pricing = { model: 'm', price, source: 'config' };

  it('estimates a call conservatively: the larger of the context and the last call, and a whole reply', () => {
    expect(callEstimate(300, 0, 100, pricing)).toEqual({ tokens: 400, nanoUsd: 300 * 2000 + 100 * 8000 });
    expect(callEstimate(300, 900, 100, pricing).tokens).toBe(1000);
    expect(callEstimate(300, 0, 100, undefined)).toEqual({ tokens: 400 });
  });

  it('names the first budget the call would pass, turn before session, with raises counted', () => {
    const spent = { turn: { tokens: 500, nanoUsd: 1_000_000 }, session: { tokens: 5000, nanoUsd: 9_000_000 } };
    const est = { tokens: 600, nanoUsd: 2_000_000 };
    expect(budgetBreach({ turn: { tokens: 1000 } }, {}, spent, est)).toEqual({ scope: 'turn', unit: 'tokens', limit: 1000, spent: 500, estimate: 600 });
    expect(budgetBreach({ turn: { tokens: 1000 } }, { turn: { tokens: 200 } }, spent, est)).toBeUndefined();
    expect(budgetBreach({ session: { usd: 0.01 } }, {}, spent, est)).toEqual({ scope: 'session', unit: 'usd', limit: 0.01, spent: 0.009, estimate: 0.002 });
    expect(budgetBreach({ session: { usd: 0.01 } }, { session: { usd: 0.005 } }, spent, est)).toBeUndefined();
    expect(budgetBreach(undefined, {}, spent, est)).toBeUndefined();
    expect(spendOf(undefined, pricing)).toEqual(NO_SPEND);
  });

  it('reads amounts as people type them: tokens whole, money with a dollar sign', () => {
    expect(parseBudgetAmount('200000')).toEqual({ unit: 'tokens', amount: 200000 });
    expect(parseBudgetAmount('$2.50')).toEqual({ unit: 'usd', amount: 2.5 });
    expect(parseBudgetAmount('2.5usd')).toEqual({ unit: 'usd', amount: 2.5 });
    expect(parseBudgetAmount('+5000', { raise: true })).toEqual({ unit: 'tokens', amount: 5000 });
    expect(parseBudgetAmount('+$0.50', { raise: true })).toEqual({ unit: 'usd', amount: 0.5 });
    expect(() => parseBudgetAmount('1.5')).toThrow(/not a whole number of tokens/);
    expect(() => parseBudgetAmount('+5')).toThrow(UsageError);
    expect(() => parseBudgetAmount('lots')).toThrow(/not a budget amount/);
    expect(() => parseBudgetAmount('-3')).toThrow(/not a budget amount/);
  });
});

describe('the config boundary', () => {
  const dirWith = (config: unknown) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-costs-'));
    writeFileSync(path.join(dir, 'harness.config.json'), JSON.stringify(config));
    return dir;
  };

  it('validates prices and budgets, naming the field', () => {
    expect(() => resolveSessionConfig({ model: 'gpt-4o-mini' }, {}, dirWith({ prices: { m: { input: -1, output: 1 } } }))).toThrow(/prices\.m\.input/);
    expect(() => resolveSessionConfig({ model: 'gpt-4o-mini' }, {}, dirWith({ limits: { budget: { turn: {} } } }))).toThrow(/limits\.budget\.turn: give tokens, usd or both/);
    expect(() => resolveSessionConfig({ model: 'gpt-4o-mini' }, {}, dirWith({ limits: { budget: { week: { tokens: 1 } } } }))).toThrow(/limits\.budget/);
  });

  it('fixes the pricing into the session; a budget in money needs a price', () => {
    const c = resolveSessionConfig({ model: 'gpt-4o-mini' }, {}, dirWith({ limits: { budget: { session: { usd: 2 } } } }));
    expect(c.pricing).toMatchObject({ model: 'gpt-4o-mini', source: `default table ${DEFAULT_PRICES.asOf}` });
    expect(c.limits.budget).toEqual({ session: { usd: 2 } });
    const err = (() => {
      try {
        resolveSessionConfig({ model: 'mystery' }, { OPENAI_BASE_URL: 'https://api.example.org/v1' }, dirWith({ limits: { budget: { turn: { usd: 1 } } } }));
      } catch (e) {
        return e as UsageError;
      }
    })();
    expect(err).toBeInstanceOf(UsageError);
    expect(err!.message).toMatch(/^limits\.budget\.turn\.usd: the model mystery has no price/);
    expect(err!.hint).toMatch(/"prices"/);
  });
});

describe('usage and the ledger', () => {
  it('reads the cached prompt tokens a provider reports (OpenAI and DeepSeek names) and keeps them bounded', async () => {
    for (const extra of [{ prompt_tokens_details: { cached_tokens: 60 } }, { prompt_cache_hit_tokens: 60 }]) {
      const server = createServer((_req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ id: 'x', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110, ...extra } }));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      try {
        const client = new OpenAIModelClient({ apiKey: 'k', baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, timeoutMs: 5000 });
        const answer = await client.complete({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [], headers: {} });
        expect(answer.usage).toEqual({ prompt_tokens: 100, completion_tokens: 10, total_tokens: 110, cached_tokens: 60 });
        expect(boundedAnswer(answer).usage.cached_tokens).toBe(60);
      } finally {
        server.close();
      }
    }
    expect(boundedAnswer({ content: 'x', toolCalls: [], usage: { ...usage(10, 1), cached_tokens: 50 }, model: 'm' }).usage.cached_tokens).toBe(10);
  });

  it('counts a reply once, its corrections apart, and its failed attempts as waste', () => {
    const pricing = { model: 'm', price, source: 'config' };
    const entries = ledgerEntries({ kind: 'model', step: 1, model: 'm', attempts: 3, usage: usage(300, 30), wasted: usage(40, 0), corrections: [usage(100, 10)] }, pricing);
    expect(entries.map((e) => [e.kind, e.usage?.total_tokens, e.attempts])).toEqual([['model', 220, 3], ['correction', 110, 1]]);
    const t = countEntries(emptyLedgerTally(), entries);
    expect(t.byKind.model).toMatchObject({ calls: 1, total_tokens: 220 });
    expect(t.byKind.correction).toMatchObject({ calls: 1, total_tokens: 110 });
    expect(t.byKind.retry_waste).toMatchObject({ calls: 2, total_tokens: 40, nanoUsd: 40 * 2000 });
    expect(totalOf(t)).toMatchObject({ total_tokens: 370, nanoUsd: 300 * 2000 + 30 * 8000 + 40 * 2000 });
    expect(t.byModel.m).toEqual(totalOf(t));
    const unpriced = countEntries(emptyLedgerTally(), ledgerEntries({ kind: 'model', step: 1, model: 'm', attempts: 1, usage: usage(1, 1) }, { model: 'm', source: 'no price' }));
    expect(totalOf(unpriced).nanoUsd).toBeUndefined();
  });
});
