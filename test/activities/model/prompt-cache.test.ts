/**
 * Prompt caching at the provider's edge: the cached prompt tokens each supported server reports
 * (OpenAI, DeepSeek, llama-server's fields, plain and streamed) become the reply's cached_tokens,
 * and `prompt_cache_key` goes only to the API that reads it.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { OpenAIModelClient, readsCacheKey } from '../../../activities/model/client';
import { cachedOf } from '../../../activities/model/usage';
import { textModeMessages } from '../../../activities/text-tools/render';

const usage = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };

/** A server answering every request with `reply` (plain JSON, or these SSE events); the request bodies it got. */
async function serve(reply: object | string[]): Promise<{ url: string; bodies: Record<string, unknown>[]; close(): void }> {
  const bodies: Record<string, unknown>[] = [];
  const read = async (req: IncomingMessage) => {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const server = createServer((req, res) => {
    void read(req).then((body) => {
      bodies.push(body);
      if (Array.isArray(reply)) {
        res.setHeader('content-type', 'text/event-stream');
        res.end(reply.map((e) => `data: ${e}\n\n`).join('') + 'data: [DONE]\n\n');
      } else {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(reply));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bodies, close: () => server.close() };
}

const completion = (extra: object, usageExtra: object = {}) => ({
  id: 'x',
  object: 'chat.completion',
  created: 0,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  usage: { ...usage, ...usageExtra },
  ...extra,
});

describe('cached prompt tokens', () => {
  it('are read under every name the supported servers use', () => {
    expect(cachedOf({ prompt_tokens_details: { cached_tokens: 60 } })).toEqual({ cached_tokens: 60 });
    expect(cachedOf({ prompt_cache_hit_tokens: 60, prompt_cache_miss_tokens: 40 })).toEqual({ cached_tokens: 60 });
    expect(cachedOf({}, { timings: { cache_n: 60, prompt_n: 40, prompt_ms: 12.5 } })).toEqual({ cached_tokens: 60 });
    expect(cachedOf({}, { tokens_cached: 60 })).toEqual({ cached_tokens: 60 });
    expect(cachedOf({ prompt_tokens_details: { cached_tokens: 0 } }, { timings: { cache_n: 0 } })).toEqual({});
  });

  it("come from llama-server's timings in a plain reply and in a stream's last chunks", async () => {
    const plain = await serve(completion({ timings: { cache_n: 70, prompt_n: 30, prompt_ms: 5 } }));
    const chunk = (o: object) => JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', ...o });
    const streamed = await serve([
      chunk({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] }),
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], timings: { cache_n: 70, prompt_n: 30 } }),
      chunk({ choices: [], usage }),
    ]);
    try {
      for (const [server, onText] of [[plain, undefined], [streamed, () => undefined]] as const) {
        const client = new OpenAIModelClient({ apiKey: 'k', baseURL: server.url, timeoutMs: 5000 });
        const answer = await client.complete({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [], headers: {}, ...(onText ? { onText } : {}) });
        expect(answer.usage).toEqual({ ...usage, cached_tokens: 70 });
      }
    } finally {
      plain.close();
      streamed.close();
    }
  });
});

describe('prompt_cache_key', () => {
  it("is sent to OpenAI's API only: other compatible servers may refuse a field they do not know", async () => {
    expect(readsCacheKey(undefined)).toBe(true);
    expect(readsCacheKey('https://api.openai.com/v1')).toBe(true);
    for (const other of ['https://api.deepseek.com', 'http://127.0.0.1:8080/v1', 'https://openrouter.ai/api/v1']) expect(readsCacheKey(other)).toBe(false);
    const server = await serve(completion({}));
    try {
      const client = new OpenAIModelClient({ apiKey: 'k', baseURL: server.url, timeoutMs: 5000 });
      await client.complete({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [], headers: {}, cacheKey: 'session-1' });
      expect(server.bodies[0]).not.toHaveProperty('prompt_cache_key');
    } finally {
      server.close();
    }
  });
});

describe('memory after the conversation in text mode', () => {
  it('reaches a text-mode model as the user speaking, since its template may take a system message only first', () => {
    const out = textModeMessages(
      [
        { role: 'system', content: 'prompt' },
        { role: 'user', content: 'task' },
        { role: 'system', content: '## Working memory' },
      ],
      [],
    );
    expect(out.map((m) => m.role)).toEqual(['system', 'user']);
    expect(out[1]!.content).toBe('task\n\n## Working memory');
  });
});
