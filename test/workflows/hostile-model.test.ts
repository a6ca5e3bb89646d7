/**
 * Model replies written to break the workflow code that reads them (no model input may
 * fail a workflow task, which Temporal retries forever on every worker). Each reply goes through
 * a real turn (dev server, worker, scripted model or a raw OpenAI-compatible endpoint) under the
 * default policy; each must come back to the model as a structured tool error (or be handled) and
 * the turn must go on to its final answer, with no WorkflowTaskFailed event in any history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnResult } from '../../deterministic/session';
import type { ScriptToolCall } from '../../scripted-model/script';
import { DEFAULT_POLICY, endpointConfig, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { startHostileEndpoint, type HostileEndpoint, type HostileReply } from '../support/hostile-endpoint';
import { toolResults, watchedTurn } from '../support/watched-turn';

let h: TestHarness;
let endpoint: HostileEndpoint;
beforeAll(async () => {
  [h, endpoint] = await Promise.all([startHarness(), startHostileEndpoint()]);
});
afterAll(async () => {
  await h?.stop();
  await endpoint?.close();
});

const DONE = 'HOSTILE_DONE';
const deepArray = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const deepObject = (n: number) => `${'{"a":'.repeat(n)}{}${'}'.repeat(n)}`;
const MB = 1 << 20;

/** A scripted turn: one reply making `calls`, then the final answer once the last message contains `sees`. */
async function scripted(calls: ScriptToolCall[], sees: string): Promise<TurnResult> {
  const script = { steps: [{ tool_calls: calls }, { expect: { last_message_contains: sees }, content: DONE }] };
  const r = await watchedTurn(h, newSessionId('hostile'), scriptedConfig(script, {}, DEFAULT_POLICY), 'go');
  expect(r.terminated_by).toBe('final_answer');
  expect(r.answer).toBe(DONE);
  return r;
}

/** The error types (or `ok`) of a turn's tool results, in order. */
const outcomes = (r: TurnResult) => toolResults(r.messages).map((t) => (t.ok ? 'ok' : t.error_type));

describe('hostile tool calls from the scripted model', () => {
  it.each([
    ['an argument nested 100,000 arrays deep', [{ name: 'read_file', arguments: `{"path":${deepArray(100_000)}}` }]],
    ['arguments nested 100,000 objects deep', [{ name: 'read_file', arguments: `{"path":"x","more":${deepObject(100_000)}}` }]],
    ['a record nested 100,000 objects deep', [{ name: 'http_request', arguments: `{"url":"http://example.com","headers":{"a":${deepObject(100_000)}}}` }]],
    ['arguments that are not an object', ['[]', '1', 'null', '"null"', 'true', '"{\\"answer\\":\\"x\\"}"'].map((a) => ({ name: 'finish', arguments: a }))],
    [
      'finish, ask_user and remember with the wrong types',
      ['{"answer":42}', '{"answer":{"text":"x"}}', '{"answer":null}'].map((a) => ({ name: 'finish', arguments: a })).concat([
        { name: 'ask_user', arguments: '{"question":["who?"]}' },
        { name: 'ask_user', arguments: '{"question":""}' },
        { name: 'remember', arguments: '{"key":1,"value":null}' },
      ]),
    ],
    ['numbers no double holds', ['1e309', '-1e309', '123456789012345678901234567890', '1e-400'].map((n) => ({ name: 'read_file', arguments: `{"path":"a","max_bytes":${n}}` }))],
  ])('%s: INVALID_ARGUMENTS', async (_what, calls) => {
    const r = await scripted(calls, 'INVALID_ARGUMENTS');
    expect(outcomes(r)).toEqual(calls.map(() => 'INVALID_ARGUMENTS'));
  });

  it('tool names that are object internals, control characters or lone surrogates: UNKNOWN_TOOL', async () => {
    const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'a\u0000b', '\ud800', 'mcp__ghost__tool', 'read_file '];
    const r = await scripted(names.map((name) => ({ name, arguments: '{}' })), 'UNKNOWN_TOOL');
    expect(outcomes(r)).toEqual(names.map(() => 'UNKNOWN_TOOL'));
  });

  it('__proto__, constructor and toString as argument keys and memory keys are plain data', async () => {
    const r = await scripted(
      [
        { name: 'read_file', arguments: '{"__proto__":{"path":"x"},"constructor":{"path":"y"},"toString":1,"path":"missing.txt"}' },
        ...['__proto__', 'constructor', 'toString'].map((key) => ({ name: 'remember', arguments: JSON.stringify({ key, value: `v-${key}` }) })),
      ],
      'remembered',
    );
    expect(outcomes(r)).toEqual(['FILE_NOT_FOUND', 'ok', 'ok', 'ok']);
    expect(r.memory).toEqual({ ['__proto__']: 'v-__proto__', constructor: 'v-constructor', toString: 'v-toString' });
  });

  it('lone surrogates and NUL remembered: the system message carrying them is found again by its hash', async () => {
    const script = {
      steps: [
        { tool_calls: [{ name: 'remember', arguments: '{"key":"k\\ud800","value":"v\\u0000\\udc00 end"}' }] },
        { tool_calls: [{ name: 'get_current_time', arguments: '{}' }] },
        { tool_calls: [{ name: 'get_current_time', arguments: '{"timezone":"UTC"}' }] },
        { content: DONE },
      ],
    };
    const r = await watchedTurn(h, newSessionId('hostile'), scriptedConfig(script, {}, DEFAULT_POLICY), 'go');
    expect([r.terminated_by, r.answer, r.error]).toEqual(['final_answer', DONE, undefined]);
    expect(outcomes(r)).toEqual(['ok', 'ok', 'ok']);
  });

  it('remembering more than working memory holds: MEMORY_FULL once it is full, forgetting still works', async () => {
    const facts = Array.from({ length: 40 }, (_, i) => ({ name: 'remember', arguments: JSON.stringify({ key: `k${i}`, value: 'v'.repeat(2000) }) }));
    const r = await scripted([...facts, { name: 'remember', arguments: '{"key":"k0","value":""}' }], 'remembered');
    const results = outcomes(r);
    expect(results.filter((t) => t === 'ok').length).toBeGreaterThan(10);
    expect(results.slice(16, 40)).toEqual(Array(24).fill('MEMORY_FULL'));
    expect(results.at(-1)).toBe('ok');
  });

  it('a key of a megabyte is dropped like any unknown key; duplicate provider ids get their own results', async () => {
    const r = await scripted(
      [
        { name: 'read_file', arguments: `{"${'k'.repeat(MB)}":1,"path":"missing.txt"}`, id: 'same' },
        { name: 'read_file', arguments: '{"path":"missing.txt"}', id: 'same' },
      ],
      'FILE_NOT_FOUND',
    );
    expect(outcomes(r)).toEqual(['FILE_NOT_FOUND', 'FILE_NOT_FOUND']);
    const ids = r.messages.flatMap((m) => (m.role === 'tool' ? [m.tool_call_id] : []));
    expect(new Set(ids).size).toBe(2);
  });
});

describe('replies no honest provider sends, from a raw endpoint', () => {
  /** A turn against the endpoint: the replies in order; each later request must show the previous results. */
  async function raw(replies: HostileReply[]): Promise<TurnResult> {
    const sessionId = newSessionId('raw');
    endpoint.script(sessionId, [...replies, { role: 'assistant', content: DONE }]);
    const r = await watchedTurn(h, sessionId, endpointConfig(endpoint.url, { modelMaxAttempts: 1 }, DEFAULT_POLICY), 'go');
    expect([r.terminated_by, r.answer, r.error]).toEqual(['final_answer', DONE, undefined]);
    return r;
  }
  const call = (fn: Record<string, unknown>, id = 'c1') => ({ id, type: 'function', function: fn });

  it('arguments as an object, a number or null, a name that is a number, null or a megabyte long', async () => {
    const r = await raw([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          call({ name: 'read_file', arguments: { path: 'missing.txt' } }, 'a'),
          call({ name: 'read_file', arguments: 5 }, 'b'),
          call({ name: 'finish', arguments: null }, 'c'),
          call({ name: 42, arguments: '{}' }, 'd'),
          call({ name: null, arguments: '{}' }, 'e'),
          call({ name: 'x'.repeat(MB), arguments: '{}' }, 'f'),
        ],
      },
    ]);
    expect(outcomes(r)).toEqual(['FILE_NOT_FOUND', 'INVALID_ARGUMENTS', 'INVALID_ARGUMENTS', 'UNKNOWN_TOOL', 'UNKNOWN_TOOL', 'UNKNOWN_TOOL']);
    // What the model reads back about a megabyte name is a short message, not the name again.
    expect(Math.max(...r.messages.filter((m) => m.role === 'tool').map((m) => m.content.length))).toBeLessThan(4096);
  });

  it('content as an array of parts, an object or a number', async () => {
    const r = await raw([
      { role: 'assistant', content: [{ type: 'text', text: 'thinking' }], tool_calls: [call({ name: 'get_current_time', arguments: '{}' })] },
      { role: 'assistant', content: { nested: true }, tool_calls: [call({ name: 'get_current_time', arguments: '{}' })] },
      { role: 'assistant', content: 7, tool_calls: [call({ name: 'get_current_time', arguments: '{}' })] },
    ]);
    expect(outcomes(r)).toEqual(['ok', 'ok', 'ok']);
  });

  it('arguments holding 150,000 values: refused before any pass over them; the other calls of the reply run', async () => {
    const many = `{"path":"a","x":[${'0,'.repeat(150_000)}0]}`;
    const r = await raw([{ role: 'assistant', content: null, tool_calls: [call({ name: 'read_file', arguments: many }, 'a'), call({ name: 'get_current_time', arguments: '{}' }, 'b')] }]);
    expect(outcomes(r)).toEqual(['INVALID_ARGUMENTS', 'ok']);
  });

  it('twenty thousand tool calls in one reply: a bounded number is judged, the model is told about the rest', async () => {
    const calls = Array.from({ length: 20_000 }, (_, i) => call({ name: 'nope', arguments: '{}' }, `n${i}`));
    const r = await raw([{ role: 'assistant', content: null, tool_calls: calls }]);
    const results = outcomes(r);
    expect(results.length).toBeGreaterThan(0);
    expect(results.length).toBeLessThanOrEqual(128);
    expect(new Set(results)).toEqual(new Set(['UNKNOWN_TOOL']));
    expect(r.messages.some((m) => m.role === 'user' && m.content.includes('20000 tool calls'))).toBe(true);
  });
});
