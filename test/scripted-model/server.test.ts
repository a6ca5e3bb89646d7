import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { APIError } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { loadScript, MAX_SCRIPT_BYTES, parseScript, ScriptError, type Script } from '../../scripted-model/script';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';

const servers: ScriptedModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(script?: Script): Promise<{ server: ScriptedModelServer; client: OpenAI }> {
  const server = await startScriptedModel({ script });
  servers.push(server);
  return { server, client: new OpenAI({ baseURL: server.url, apiKey: 'test', maxRetries: 0 }) };
}

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;
const user = (content: string): Message => ({ role: 'user', content });

function ask(client: OpenAI, messages: Message[], headers: Record<string, string> = {}, extra: object = {}) {
  return client.chat.completions.create({ model: 'scripted-test', messages, ...extra }, { headers });
}

async function failure(promise: Promise<unknown>): Promise<APIError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof APIError) return err;
    throw err;
  }
  throw new Error('expected the call to fail');
}

describe('scripted model server', () => {
  it('answers a content step with a stop completion that echoes the model', async () => {
    const { client } = await start({ steps: [{ content: 'Done. HARNESS_OK' }] });
    const res = await ask(client, [user('hello there')]);
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('scripted-test');
    expect(res.choices[0].message.content).toBe('Done. HARNESS_OK');
    expect(res.choices[0].message.tool_calls).toBeUndefined();
    expect(res.choices[0].finish_reason).toBe('stop');
    expect(res.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });

  it('returns tool calls with JSON-stringified object arguments and predictable ids', async () => {
    const { client } = await start({
      steps: [
        { content: 'first' },
        {
          tool_calls: [
            { name: 'read_file', arguments: { path: 'README2.md' } },
            { name: 'list_files', arguments: {}, id: 'my_call' },
          ],
        },
      ],
    });
    await ask(client, [user('go')]);
    const res = await ask(client, [user('go')]);
    const choice = res.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      { id: 'call_1_0', type: 'function', function: { name: 'read_file', arguments: '{"path":"README2.md"}' } },
      { id: 'my_call', type: 'function', function: { name: 'list_files', arguments: '{}' } },
    ]);
  });

  it('passes string arguments through verbatim so scripts can send malformed JSON', async () => {
    const { client } = await start({ steps: [{ tool_calls: [{ name: 'read_file', arguments: '{"path": ' }] }] });
    const res = await ask(client, [user('go')]);
    const call = res.choices[0].message.tool_calls![0];
    expect(call.type === 'function' && call.function.arguments).toBe('{"path": ');
  });

  it('answers a step whose expectations are all met', async () => {
    const { client } = await start({
      steps: [
        {
          expect: {
            last_message_contains: 'FILE_NOT_FOUND',
            messages_contain: 'README2.md',
            system_contains: 'careful agent',
            tools_include: ['read_file', 'list_files'],
          },
          content: 'ok',
        },
      ],
    });
    const tool = (name: string) => ({ type: 'function' as const, function: { name, parameters: { type: 'object' } } });
    const res = await ask(
      client,
      [
        { role: 'system', content: 'You are a careful agent.' },
        user('read it'),
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"path":"README2.md"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: '{"ok":false,"error_type":"FILE_NOT_FOUND"}' },
      ],
      {},
      { tools: [tool('read_file'), tool('list_files')] },
    );
    expect(res.choices[0].message.content).toBe('ok');
  });

  it('rejects an unmet expectation with a 400 that names the step and what was expected and found', async () => {
    const { server, client } = await start({
      steps: [{ content: 'one' }, { expect: { last_message_contains: 'FILE_NOT_FOUND' }, content: 'two' }],
    });
    await ask(client, [user('first')]);
    const err = await failure(ask(client, [user('the file was read fine')]));
    expect(err.status).toBe(400);
    expect(err.type).toBe('script_expectation_failed');
    expect(err.message).toContain('scripted model: step 2 expectation failed');
    expect(err.message).toContain('last message does not contain "FILE_NOT_FOUND"');
    expect(err.message).toContain('(last message: "the file was read fine")');
    expect(server.requests.map((r) => [r.index, r.status])).toEqual([[0, 200], [1, 400]]);
  });

  it('names missing tools and a missing system message when those expectations fail', async () => {
    const { client } = await start({ steps: [{ expect: { tools_include: 'shell', system_contains: 'x' }, content: 'no' }] });
    const err = await failure(ask(client, [user('hi')]));
    expect(err.message).toContain('system message does not contain "x" (no system message)');
    expect(err.message).toContain('tools do not include "shell" (tools: none)');
  });

  it('fails a step with HTTP 429 twice and answers it on the third call', async () => {
    const { server, client } = await start({
      steps: [{ content: 'a' }, { content: 'b' }, { fault: { status: 429, times: 2 }, content: 'Done. HARNESS_OK' }],
    });
    await ask(client, [user('1')]);
    await ask(client, [user('2')]);
    const first = await failure(ask(client, [user('3')]));
    expect(first.status).toBe(429);
    expect(first.type).toBe('scripted_fault');
    expect(first.message).toContain('scripted fault: HTTP 429 (1 of 2) at step 3');
    const second = await failure(ask(client, [user('3')]));
    expect(second.message).toContain('(2 of 2) at step 3');
    const third = await ask(client, [user('3')]);
    expect(third.choices[0].message.content).toBe('Done. HARNESS_OK');
    expect(server.requests.map((r) => r.status)).toEqual([200, 200, 429, 429, 200]);
  });

  it('delays the answer by delay_ms and reports the request on arrival, before the delay', async () => {
    const { server, client } = await start({ steps: [{ fault: { delay_ms: 300 }, content: 'slow' }] });
    const seen: number[] = [];
    server.onRequest((r) => seen.push(r.status));
    const began = Date.now();
    const res = await ask(client, [user('go')]);
    expect(Date.now() - began).toBeGreaterThanOrEqual(280);
    expect(res.choices[0].message.content).toBe('slow');
    expect(seen).toEqual([0]);
  });

  it('survives a client that disconnects during a delay and answers the retry of that step at once', async () => {
    const { server, client } = await start({ steps: [{ fault: { delay_ms: 600_000 }, content: 'eventually' }] });
    const abort = new AbortController();
    const stop = server.onRequest(() => setTimeout(() => abort.abort(), 50));
    const err = await failure(client.chat.completions.create({ model: 'm', messages: [user('go')] }, { signal: abort.signal }));
    expect(err.constructor.name).toBe('APIUserAbortError');
    stop();
    // The delay is ten minutes: an answer at all means the retry was not delayed again.
    const res = await ask(client, [user('go')]);
    expect(res.choices[0].message.content).toBe('eventually');
    await expect.poll(() => server.requests[0].status).toBe(499);
  });

  it('reports an exhausted script with the number of steps and the session', async () => {
    const { client } = await start({ steps: [{ content: 'only' }] });
    await ask(client, [user('1')], { 'x-harness-session': 's1' });
    const err = await failure(ask(client, [user('2')], { 'x-harness-session': 's1' }));
    expect(err.status).toBe(400);
    expect(err.type).toBe('script_exhausted');
    expect(err.message).toContain('scripted model: script exhausted after 1 steps (session s1)');
  });

  it('keeps separate cursors for two interleaved sessions', async () => {
    const { client } = await start({ steps: [{ content: 'one' }, { content: 'two' }] });
    const say = async (session: string) =>
      (await ask(client, [user('x')], { 'x-harness-session': session })).choices[0].message.content;
    expect(await say('a')).toBe('one');
    expect(await say('b')).toBe('one');
    expect(await say('a')).toBe('two');
    const [a, b] = await Promise.all([failure(ask(client, [user('x')], { 'x-harness-session': 'a' })), say('b')]);
    expect(a.type).toBe('script_exhausted');
    expect(b).toBe('two');
  });

  it('returns the same step every time for the same call-index header', async () => {
    const { client } = await start({ steps: [{ content: 'zero' }, { content: 'one' }, { content: 'two' }] });
    const at = async (index: string) =>
      (await ask(client, [user('x')], { 'x-harness-call-index': index })).choices[0].message.content;
    expect(await at('1')).toBe('one');
    expect(await at('1')).toBe('one');
    expect(await at('0')).toBe('zero');
    const bad = await failure(ask(client, [user('x')], { 'x-harness-call-index': '-1' }));
    expect(bad.status).toBe(400);
    expect(bad.message).toContain('x-harness-call-index must be a non-negative integer');
  });

  it('answers compress calls from summaries without consuming steps, repeating the last summary', async () => {
    const { server, client } = await start({ steps: [{ content: 'step one' }], summaries: ['S1', 'S2'] });
    const compress = async () =>
      (await ask(client, [user('long history')], { 'x-harness-purpose': 'compress' })).choices[0].message.content;
    expect(await compress()).toBe('S1');
    expect(await compress()).toBe('S2');
    expect(await compress()).toBe('S2');
    expect((await ask(client, [user('x')])).choices[0].message.content).toBe('step one');
    expect(server.requests.map((r) => [r.purpose, r.index])).toEqual([
      ['compress', null],
      ['compress', null],
      ['compress', null],
      ['chat', 0],
    ]);
  });

  it('builds a generic summary from the user messages when the script has no summaries', async () => {
    const { client } = await start({ steps: [{ content: 'x' }] });
    const res = await ask(client, [{ role: 'system', content: 's' }, user('fix the bug'), user('then test')], {
      'x-harness-purpose': 'compress',
    });
    expect(res.choices[0].message.content).toBe('Summary of 3 earlier messages: fix the bug | then test');
  });

  it('uses a script registered per session, idempotently, and refuses sessions without one', async () => {
    const { client, server } = await start();
    const script: Script = { steps: [{ content: 'mine' }, { content: 'mine again' }] };
    server.registerScript('alpha', script);
    const say = async () => (await ask(client, [user('x')], { 'x-harness-session': 'alpha' })).choices[0].message.content;
    expect(await say()).toBe('mine');
    server.registerScript('alpha', { steps: [{ content: 'mine' }, { content: 'mine again' }] });
    expect(await say()).toBe('mine again');
    const err = await failure(ask(client, [user('x')], { 'x-harness-session': 'beta' }));
    expect(err.status).toBe(400);
    expect(err.message).toContain('no script for session beta');
  });

  it('answers health, models, unknown routes and bad bodies with JSON', async () => {
    const { server } = await start({ steps: [{ content: 'x' }] });
    const base = server.url.replace(/\/v1$/, '');
    expect(await (await fetch(`${base}/health`)).json()).toEqual({ ok: true });
    expect((await (await fetch(`${server.url}/models`)).json()).data[0].id).toBe('scripted');
    const missing = await fetch(`${base}/nope`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.message).toContain('no route for GET /nope');
    const post = (body: string) => fetch(`${server.url}/chat/completions`, { method: 'POST', body });
    const notJson = await post('{oops');
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).error.message).toContain('not valid JSON');
    const noMessages = await post('{"model":"m"}');
    expect((await noMessages.json()).error.message).toContain('"messages" array');
  });
});

describe('script files', () => {
  it('names the zod path when a tool call has no name', () => {
    const bad = { steps: [{ content: 'ok' }, { tool_calls: [{ arguments: {} }] }] };
    expect(() => parseScript(bad, 'examples/x.json')).toThrow(ScriptError);
    expect(() => parseScript(bad, 'examples/x.json')).toThrow(/^examples\/x\.json: steps\.1\.tool_calls\.0\.name: expected string/);
  });

  it('rejects a step with neither content nor tool calls', () => {
    expect(() => parseScript({ steps: [{ expect: { last_message_contains: 'x' } }] }, 's.json')).toThrow(
      's.json: steps.0: a step needs "content" or a non-empty "tool_calls"',
    );
  });

  it('rejects unknown keys', () => {
    expect(() => parseScript({ steps: [{ content: 'x', contnet: 'y' }] }, 's.json')).toThrow(/s\.json: steps\.0: .*contnet/);
  });

  it('gives one-line errors for a missing file and bad JSON, and loads a good file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'scripted-'));
    const missing = join(dir, 'nope.json');
    expect(() => loadScript(missing)).toThrow(`${missing}: file not found`);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"steps": [');
    let message = '';
    try {
      loadScript(broken);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe(`${broken}: invalid JSON at line 1, column 12 (unexpected end of input)`);
    expect(message).not.toContain('\n');
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ steps: [{ fault: { status: 429 }, content: 'hi' }], summaries: ['s'] }));
    expect(loadScript(good)).toEqual({ steps: [{ fault: { status: 429 }, content: 'hi' }], summaries: ['s'] });
  });

  it('refuses a file over MAX_SCRIPT_BYTES with its size, and a FIFO or a folder without waiting on it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'scripted-'));
    const big = join(dir, 'big.json');
    writeFileSync(big, `{"steps":[{"content":"${'x'.repeat(MAX_SCRIPT_BYTES)}"}]}`);
    expect(() => loadScript(big)).toThrow(`${big}: the script is ${MAX_SCRIPT_BYTES + 26} bytes; a script may be at most ${MAX_SCRIPT_BYTES} bytes`);
    const fifo = join(dir, 'fifo.json');
    execFileSync('mkfifo', [fifo]);
    expect(() => loadScript(fifo)).toThrow(`${fifo}: not a regular file`);
    expect(() => loadScript(dir)).toThrow(ScriptError);
  });
});
