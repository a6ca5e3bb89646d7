/**
 * One model call in each tool mode against a fake client: what is sent (tools field or system
 * text, the schema, the cap), corrections of malformed, cut and empty replies (bounded), and
 * auto's decision from the first reply or the probe.
 */
import { describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { capParameter, type ModelAnswer, type ModelClient, type ModelRequest } from '../../../activities/model/client';
import { exchange, MAX_CORRECTIONS } from '../../../activities/model/exchange';
import { callDeciding, type ToolModeCache } from '../../../activities/model/auto';
import { envelopeSchema } from '../../../activities/text-tools/schema';
import { builtinRegistry } from '../../../deterministic/builtin-tools';

const tools = builtinRegistry().specs().filter((t) => ['read_file', 'get_current_time'].includes(t.name));
const req: ModelRequest = {
  model: 'tiny',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Read a.txt' },
  ],
  tools,
  headers: { 'x-harness-session': 's', 'x-harness-call-index': '0' },
  maxOutputTokens: 100,
};
const usage = { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 };

/** A client answering from a list (a function gets the request); it keeps what it was sent. */
function fake(answers: Array<Partial<ModelAnswer> | ((r: ModelRequest) => Partial<ModelAnswer>)>): ModelClient & { sent: ModelRequest[] } {
  const sent: ModelRequest[] = [];
  return {
    sent,
    async complete(r) {
      sent.push(r);
      const next = answers.shift();
      if (!next) throw new Error('no answer left');
      const a = typeof next === 'function' ? next(r) : next;
      return { content: null, toolCalls: [], usage, model: 'tiny', ...a };
    },
  };
}

describe('text mode', () => {
  it('sends no tools field, the tools in the system message and the envelope schema; reads the call', async () => {
    const c = fake([{ content: '{"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}' }]);
    const out = await exchange(c, req, { mode: 'text', constrained: true });
    expect(out.answer.toolCalls).toEqual([{ id: '', name: 'read_file', arguments: '{"path":"a.txt"}' }]);
    expect(out.corrections).toEqual([]);
    const sent = c.sent[0]!;
    expect(sent.tools).toEqual([]);
    expect(sent.messages[0]!.content).toContain('- read_file(path: string');
    expect(sent.responseFormat).toMatchObject({ type: 'json_schema', json_schema: { schema: envelopeSchema(tools) } });
    expect(sent.maxOutputTokens).toBe(100);
  });

  it('corrects a malformed reply and goes on; past the bound the reply becomes a call marked invalid', async () => {
    const fixed = fake([{ content: 'read_file(a.txt)<tool_call>{"name": "read_file",' }, { content: '{"answer": "done"}' }]);
    const out = await exchange(fixed, req, { mode: 'text' });
    expect(out.answer).toMatchObject({ content: 'done', toolCalls: [] });
    expect(out.corrections).toHaveLength(1);
    expect(fixed.sent[1]!.headers['x-harness-correction']).toBe('1');
    expect(fixed.sent[1]!.messages.at(-1)!.content).toMatch(/^Your last reply could not be used: /);
    expect(out.answer.usage.total_tokens).toBe(24);

    const bad = '{"tool_calls": [{"name": "read_file", "arguments": {"path": ';
    const never = fake(Array.from({ length: MAX_CORRECTIONS + 1 }, () => ({ content: bad })));
    const given = await exchange(never, req, { mode: 'text' });
    expect(never.sent).toHaveLength(MAX_CORRECTIONS + 1);
    expect(given.corrections).toHaveLength(MAX_CORRECTIONS);
    expect(given.answer.toolCalls).toEqual([{ id: '', name: 'read_file', arguments: bad, invalid: expect.stringContaining('not valid JSON') }]);
  });

  it('drops the schema for good when the endpoint refuses it, and says so once the call went through', async () => {
    let told = 0;
    const refusing = fake([
      (r) => {
        if (r.responseFormat) throw new OpenAI.BadRequestError(400, { message: 'JSON schema conversion failed' }, 'bad', new Headers());
        return { content: '{"answer": "ok"}' };
      },
      { content: '{"answer": "ok"}' },
    ]);
    const out = await exchange(refusing, req, { mode: 'text', constrained: true }, () => told++);
    expect([out.constrained, told, out.answer.content]).toEqual([false, 1, 'ok']);
  });
});

describe('cut and empty replies', () => {
  it('a cut answer is corrected; still cut after the bound, it says so (native and text)', async () => {
    for (const mode of ['native', 'text'] as const) {
      const c = fake(Array.from({ length: MAX_CORRECTIONS + 1 }, () => ({ content: 'A very long answer that goes on', finishReason: 'length' })));
      const out = await exchange(c, req, { mode });
      expect(out.corrections.map((x) => x.problem)).toEqual(Array(MAX_CORRECTIONS).fill('the reply was cut off at the output limit of 100 tokens; say it in fewer words'));
      expect(out.truncated).toBe(true);
      expect(out.answer.content).toMatch(/\[The reply was cut off at the output limit \(100 tokens\)\.\]$/);
    }
  });

  it('text mode: an envelope cut at the cap runs the calls written whole; one with none is a call that failed, not an answer', async () => {
    const call = '{"name": "read_file", "arguments": {"path": "a.txt"}}';
    const some = fake([{ content: `{"tool_calls": [${call}, ${call}, {"name": "read_f`, finishReason: 'length' }]);
    const out = await exchange(some, req, { mode: 'text' });
    expect([out.truncated, out.answer.toolCalls.map((c) => c.name), some.sent.length]).toEqual([true, ['read_file', 'read_file'], 1]);
    const none = fake(Array.from({ length: MAX_CORRECTIONS + 1 }, () => ({ content: '{"tool_calls": [{"name": "read_file", "arguments": {"path": "a', finishReason: 'length' })));
    const failed = await exchange(none, req, { mode: 'text' });
    expect(failed.answer.toolCalls).toEqual([expect.objectContaining({ name: 'read_file', invalid: expect.stringContaining('cut off at the output limit') })]);
  });

  it('an empty native reply is asked again; calls cut at the cap go on (the workflow names their arguments)', async () => {
    const c = fake([{ content: '' }, { content: 'Here it is.' }]);
    expect((await exchange(c, req, { mode: 'native' })).answer.content).toBe('Here it is.');
    const cut = fake([{ toolCalls: [{ id: 'x', name: 'read_file', arguments: '{"path": "a' }], finishReason: 'length' }]);
    const out = await exchange(cut, req, { mode: 'native' });
    expect([out.truncated, out.answer.toolCalls.length, cut.sent.length]).toEqual([true, 1, 1]);
  });
});

describe('auto', () => {
  it('native tool calls in the first reply decide native, with no probe', async () => {
    const c = fake([{ toolCalls: [{ id: 'a', name: 'read_file', arguments: '{"path":"a.txt"}' }] }]);
    const cache: ToolModeCache = new Map();
    const out = await callDeciding(c, req, 'k', cache);
    expect(out.decided).toMatchObject({ mode: 'native', source: 'probe' });
    expect(c.sent).toHaveLength(1);
    expect(cache.get('k')?.mode).toBe('native');
  });

  it('an endpoint that drops the tools (the prompt does not grow) gets text mode, constrained when the schema holds; the call is asked again', async () => {
    const c = fake([
      { content: 'I cannot read files.' }, // the first call, native: the model never saw the tools
      { content: 'It is noon.', usage: { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 } }, // probe with tools
      { content: 'It is noon.', usage: { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 } }, // probe without
      { content: '{"answer": "ok"}' }, // the schema probe
      { content: '{"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}' }, // the call, in text mode
    ]);
    const cache: ToolModeCache = new Map();
    const out = await callDeciding(c, req, 'k', cache);
    expect(out.decided).toMatchObject({ mode: 'text', constrained: true, reason: expect.stringContaining('dropped the tools') });
    expect(out.exchanged.answer.toolCalls.map((t) => t.name)).toEqual(['read_file']);
    expect(c.sent.slice(1, 4).map((r) => r.headers['x-harness-purpose'])).toEqual(['probe', 'probe', 'probe']);
    expect(c.sent[1]!.headers['x-harness-call-index']).toBeUndefined();
    // The worker remembers: the next session's first call goes out in text mode at once.
    const again = fake([{ content: '{"answer": "hi"}' }]);
    expect((await callDeciding(again, req, 'k', cache)).decided.mode).toBe('text');
    expect(again.sent[0]!.tools).toEqual([]);
  });

  it('calls written as text decide text mode and are taken from the reply', async () => {
    const c = fake([
      { content: '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>' },
      (r) => (r.responseFormat ? { content: 'not json' } : {}),
      { content: '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>' },
    ]);
    const out = await callDeciding(c, req, 'k', new Map());
    expect(out.decided).toMatchObject({ mode: 'text', constrained: false });
    expect(out.exchanged.answer.toolCalls.map((t) => t.name)).toEqual(['read_file']);
  });

  it('an endpoint refusing the tools field decides text mode', async () => {
    const c = fake([
      () => {
        throw new OpenAI.BadRequestError(400, { message: 'tools param requires --jinja flag' }, 'tools param requires --jinja flag', new Headers());
      },
      { content: '{"answer": "ok"}' },
      { content: '{"answer": "read"}' },
    ]);
    const out = await callDeciding(c, req, 'k', new Map());
    expect(out.decided).toMatchObject({ mode: 'text', constrained: true, reason: expect.stringContaining('--jinja') });
  });
});

describe('the reply cap', () => {
  it('goes as max_completion_tokens to OpenAI (its reasoning models refuse max_tokens), as max_tokens elsewhere (llama.cpp ignores the newer name)', () => {
    expect(capParameter(undefined)).toBe('max_completion_tokens');
    expect(capParameter('https://api.openai.com/v1')).toBe('max_completion_tokens');
    for (const url of ['https://api.deepseek.com', 'http://127.0.0.1:8080/v1', 'http://localhost:11434/v1', 'not a url']) expect(capParameter(url)).toBe('max_tokens');
  });
});
