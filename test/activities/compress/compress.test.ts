import { afterEach, describe, expect, it } from 'vitest';
import { createCompressContextActivity } from '../../../activities/compress/activity';
import { compressContext, tokenCounter, type CompressDeps } from '../../../activities/compress/compress';
import { OpenAIModelClient } from '../../../activities/model/client';
import { COMPACTED_MARK } from '../../../deterministic/context/compact';
import { pairsIntact, type CompressionConfig } from '../../../deterministic/context/plan';
import { SUMMARY_MARK, summaryMessage } from '../../../deterministic/context/summary';
import type { CompressResult } from '../../../deterministic/context/types';
import type { ChatMessage } from '../../../deterministic/types';
import { startScriptedModel, type ScriptedModelServer } from '../../../scripted-model/server';
import { ARCH_GOAL, ARCH_PATHS, architectureCase, call, randomConversation, readFileResult, rng, tsSource } from '../../../bench/fixtures/conversations';
import { figure } from '../../support/figures';

const MODEL = 'gpt-4o';
const DATE = '2025-06-01';
const count = tokenCounter(MODEL);
const config: CompressionConfig = { contextWindow: 8_192, threshold: 0.5, outputReserve: 1_024, keepTail: 6 };

function fakeDeps(summary: string | ((n: number) => string) = 'SUMMARY: read src/x.ts (42 lines); retry failed with FILE_NOT_FOUND; todo: answer.') {
  const calls: { messages: ChatMessage[]; prompt: string }[] = [];
  const deps: CompressDeps = {
    count,
    summarize: async (messages, prompt) => {
      calls.push({ messages, prompt });
      return typeof summary === 'string' ? summary : summary(messages.length);
    },
  };
  return { deps, calls };
}

function text(messages: ChatMessage[]): string {
  return messages.map((m) => `${m.content ?? ''} ${m.role === 'assistant' ? JSON.stringify(m.tool_calls ?? []) : ''}`).join('\n');
}

/** A long conversation: the goal, then many mid-sized steps; compaction alone cannot fit it. */
function longConversation(): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: 'You are an agent.' }, { role: 'user', content: 'Fix the failing build in pkg/' }];
  for (let i = 0; i < 30; i++) {
    messages.push({ role: 'assistant', content: `Step ${i}: checking pkg/m${i}.ts`, tool_calls: [call(`c${i}`, 'read_file', { path: `pkg/m${i}.ts` })] });
    messages.push({ role: 'tool', tool_call_id: `c${i}`, content: readFileResult(`pkg/m${i}.ts`, tsSource(`m${i}.ts`, 1_500, i)) });
  }
  return messages;
}

function report(label: string, r: CompressResult): void {
  figure('compression', 
    `${label}: chars ${r.before_chars} -> ${r.after_chars} (${(r.before_chars / r.after_chars).toFixed(1)}x), ` +
      `tokens ${r.before_tokens} -> ${r.after_tokens} (${(r.before_tokens / r.after_tokens).toFixed(1)}x), ` +
      `compacted ${r.compacted_tool_results}, summarized ${r.summarized_messages}, truncated ${r.truncated_messages}`,
  );
}

describe('compressContext', () => {
  it('leaves a context under the threshold untouched and makes no model call', async () => {
    const { deps, calls } = fakeDeps();
    const messages: ChatMessage[] = [{ role: 'system', content: 's' }, { role: 'user', content: 'hi' }];
    const r = await compressContext({ messages, model: MODEL, config, date: DATE }, deps);
    expect(r).toMatchObject({ compressed: false, summarized_messages: 0, compacted_tool_results: 0 });
    expect(r.messages).toBe(messages);
    expect(r.after_tokens).toBe(r.before_tokens);
    expect(calls).toHaveLength(0);
  });

  it('compacts large tool results first and skips the summary when that is enough', async () => {
    const { deps, calls } = fakeDeps();
    const r = await compressContext({ messages: architectureCase(), model: MODEL, config, date: DATE }, deps);
    expect(r.compressed).toBe(true);
    expect(r.compacted_tool_results).toBe(3);
    expect(r.summarized_messages).toBe(0);
    expect(calls).toHaveLength(0);
    expect(r.after_tokens).toBeLessThanOrEqual(r.limit_tokens);
  });

  it('compacts the oldest tool results first and keeps recent ones verbatim when that is enough', async () => {
    const { deps, calls } = fakeDeps();
    const messages = architectureCase();
    const r = await compressContext({ messages, model: MODEL, config: { contextWindow: 32_000, threshold: 13_500, outputReserve: 0, keepTail: 2 }, date: DATE }, deps);
    expect(r.compacted.map((c) => c.target)).toEqual(['path=src/a.ts']);
    expect(r.messages.slice(6)).toEqual(messages.slice(6));
    expect(r.after_tokens).toBeLessThanOrEqual(13_500);
    expect(calls).toHaveLength(0);
  });

  it('summarises the middle with one model call and inserts a marked, dated summary after the goal', async () => {
    const { deps, calls } = fakeDeps();
    const messages = longConversation();
    const r = await compressContext({ messages, model: MODEL, config: { ...config, keepTail: 4 }, date: DATE }, deps);
    expect(calls).toHaveLength(1);
    for (const kept of ['numbers', 'file paths', 'ids', 'decisions', 'failed attempts', 'causes', 'to-dos']) expect(calls[0].prompt).toContain(kept);
    expect(r.summarized_messages).toBe(messages.length - 2 - 4);
    expect(r.messages.slice(0, 2)).toEqual(messages.slice(0, 2));
    expect(r.messages[2]).toEqual(summaryMessage('SUMMARY: read src/x.ts (42 lines); retry failed with FILE_NOT_FOUND; todo: answer.', r.summarized_messages, DATE));
    expect(r.messages[2]).toMatchObject({ role: 'assistant', content: expect.stringMatching(/^\[summary of \d+ earlier messages, /) });
    expect(r.messages.slice(3).map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant', 'tool']);
    expect(pairsIntact(r.messages)).toBe(true);
    expect(r.after_tokens).toBeLessThanOrEqual(r.limit_tokens);
    expect(r.after_tokens).toBe(count(r.messages));
  });

  it('cuts a summary that would not shrink the context and still never grows', async () => {
    const { deps } = fakeDeps(() => 'very long summary '.repeat(20_000));
    const messages = longConversation();
    const r = await compressContext({ messages, model: MODEL, config: { ...config, keepTail: 4 }, date: DATE }, deps);
    expect(r.after_tokens).toBeLessThan(r.before_tokens);
    expect(r.after_chars).toBeLessThan(r.before_chars);
    expect(r.after_tokens).toBeLessThanOrEqual(r.limit_tokens);
    expect(pairsIntact(r.messages)).toBe(true);
  });

  it('never grows and keeps tool-call pairs, the system message and the goal on random conversations', async () => {
    const r0 = rng(2024);
    const seen = { compressed: 0, compacted: 0, summarized: 0, truncated: 0 };
    for (let i = 0; i < 300; i++) {
      const messages = randomConversation(r0);
      const cfg: CompressionConfig = {
        contextWindow: 500 + Math.floor(r0() * 20_000),
        threshold: r0() < 0.5 ? 0.2 + r0() * 0.8 : 100 + Math.floor(r0() * 5_000),
        outputReserve: Math.floor(r0() * 400),
        keepTail: Math.floor(r0() * 8),
        compactToolResultsOver: 200 + Math.floor(r0() * 4_000),
        maxRecordChars: 100 + Math.floor(r0() * 3_000),
      };
      const summaryLen = Math.floor(r0() ** 2 * 50_000);
      const { deps } = fakeDeps(() => 'S'.repeat(summaryLen));
      const model = r0() < 0.5 ? MODEL : 'deepseek-chat';
      const r = await compressContext({ messages, model, config: cfg, date: DATE, force: r0() < 0.1 }, { ...deps, count: tokenCounter(model) });
      const where = `case ${i}`;
      expect(r.after_tokens, where).toBeLessThanOrEqual(r.before_tokens);
      expect(r.after_chars, where).toBeLessThanOrEqual(r.before_chars);
      expect(r.after_tokens, where).toBe(tokenCounter(model)(r.messages));
      expect(pairsIntact(r.messages), where).toBe(true);
      expect(r.messages.slice(0, 2), where).toEqual(messages.slice(0, 2));
      for (const m of r.messages) if (m.role === 'tool') expect(r.messages.some((a) => a.role === 'assistant' && a.tool_calls?.some((c) => c.id === m.tool_call_id)), where).toBe(true);
      seen.compressed += Number(r.compressed);
      seen.compacted += Number(r.compacted_tool_results > 0);
      seen.summarized += Number(r.summarized_messages > 0);
      seen.truncated += Number(r.truncated_messages > 0);
    }
    figure('compression', 'random conversations:', seen);
    // The loop must exercise every path, not only the trivial one.
    expect(seen.compressed).toBeGreaterThan(60);
    expect(Math.min(seen.compacted, seen.summarized, seen.truncated)).toBeGreaterThan(10);
  });

  it('shrinks the seed architecture case at least 6x and keeps the goal and the three file paths', async () => {
    const { deps } = fakeDeps();
    const messages = architectureCase();
    const sourceChars = messages.filter((m) => m.role === 'tool').reduce((s, m) => s + (m.content ?? '').length, 0);
    expect(sourceChars).toBeGreaterThan(58_000);
    const r = await compressContext({ messages, model: MODEL, config, date: DATE }, deps);
    report('architecture case (compaction)', r);
    expect(r.before_chars / r.after_chars).toBeGreaterThanOrEqual(6);
    expect(r.before_tokens / r.after_tokens).toBeGreaterThanOrEqual(6);
    expect(r.messages[1]).toEqual({ role: 'user', content: ARCH_GOAL });
    for (const path of ARCH_PATHS) expect(text(r.messages)).toContain(path);
    expect(r.messages.filter((m) => m.role === 'tool' && m.content.startsWith(COMPACTED_MARK))).toHaveLength(3);
    expect(pairsIntact(r.messages)).toBe(true);
  });
});

describe('compressContext with the scripted model server', () => {
  const servers: ScriptedModelServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('summarises through the openai client with the compress purpose, and the next step still sees the goal and paths', async () => {
    const summary = 'Listed src/: src/a.ts, src/b.py, src/c.ts. src/a.ts: TS services (EventEmitter classes, 42 exports). src/b.py: Python batch jobs with dataclasses. To do: explain the architecture.';
    const server = await startScriptedModel({
      script: {
        summaries: [summary],
        steps: [
          { expect: { messages_contain: ARCH_GOAL }, content: 'goal ok' },
          ...ARCH_PATHS.map((p) => ({ expect: { messages_contain: p }, content: `${p} ok` })),
        ],
      },
    });
    servers.push(server);
    const client = new OpenAIModelClient({ apiKey: 'test', baseURL: server.url, timeoutMs: 10_000 });
    const activity = createCompressContextActivity(async () => ({ client, endpoint: server.url }));
    const messages = architectureCase();
    // A tight limit: compaction alone is not enough, so the middle is summarised too.
    const tight: CompressionConfig = { contextWindow: 8_192, threshold: 900, outputReserve: 1_024, keepTail: 2 };
    const r = await activity({ sessionId: 's-arch', turnId: 's-arch/turn-1', step: 4, callIndex: 4, model: { provider: 'openai', model: MODEL }, messages, config: tight, date: DATE });
    report('architecture case (compaction + summary via scripted model)', r);

    const compress = server.requests.filter((q) => q.purpose === 'compress');
    expect(compress).toHaveLength(1);
    expect(compress[0].index).toBeNull();
    const body = compress[0].body as { messages: { role: string; content: string }[] };
    expect(body.messages[0].content).toContain('failed attempts');
    expect(body.messages[1].content).toContain('src/a.ts');
    expect(r.summarized_messages).toBe(6);
    expect(r.summary_usage?.total_tokens).toBeGreaterThan(0);
    expect(r.messages[2].content).toBe(summaryMessage(summary, 6, DATE).content);
    expect(r.messages[2].content?.startsWith(`${SUMMARY_MARK}6 earlier messages, ${DATE}]`)).toBe(true);
    expect(r.before_chars / r.after_chars).toBeGreaterThanOrEqual(6);
    expect(pairsIntact(r.messages)).toBe(true);

    // The next turn steps see the compressed context; each expect checks one thing survived.
    for (let i = 0; i < 4; i++) {
      const res = await client.complete({ model: MODEL, messages: r.messages, tools: [], headers: { 'x-harness-session': 's-arch' } });
      expect(res.content).toMatch(/ok$/);
    }
  });
});
