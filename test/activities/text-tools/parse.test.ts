/** The text protocol's reader: every shape open models write calls in, answers, and what it refuses. */
import { describe, expect, it } from 'vitest';
import { parseTextReply } from '../../../activities/text-tools/parse';

const known = new Set(['read_file', 'get_current_time', 'write_file']);
const calls = (text: string) => {
  const r = parseTextReply(text, known);
  return r.kind === 'calls' ? r.calls.map((c) => [c.name, JSON.parse(c.arguments)]) : r;
};

describe('parseTextReply', () => {
  it('reads the envelope, several calls, and arguments given as a JSON string', () => {
    expect(calls('{"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}')).toEqual([['read_file', { path: 'a.txt' }]]);
    expect(calls('{"tool_calls": [{"name": "read_file", "arguments": {"path": "a"}}, {"name": "get_current_time", "arguments": {}}]}')).toEqual([
      ['read_file', { path: 'a' }],
      ['get_current_time', {}],
    ]);
    expect(calls('{"tool_calls": [{"name": "read_file", "arguments": "{\\"path\\": \\"b\\"}"}]}')).toEqual([['read_file', { path: 'b' }]]);
  });

  it('reads a bare call, OpenAI\'s shape, a list, other key names and a missing arguments object', () => {
    expect(calls('{"name": "read_file", "arguments": {"path": "x"}}')).toEqual([['read_file', { path: 'x' }]]);
    expect(calls('{"type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\":\\"y\\"}"}}')).toEqual([['read_file', { path: 'y' }]]);
    expect(calls('[{"tool": "read_file", "args": {"path": "z"}}, {"tool_name": "get_current_time", "parameters": {}}]')).toEqual([
      ['read_file', { path: 'z' }],
      ['get_current_time', {}],
    ]);
    expect(calls('{"name": "get_current_time"}')).toEqual([['get_current_time', {}]]);
  });

  it('reads <tool_call> tags (one call each, unclosed at the end too), fenced blocks and JSON after a sentence', () => {
    expect(calls('<tool_call>\n{"name": "read_file", "arguments": {"path": "a"}}\n</tool_call>\n<tool_call>{"name": "get_current_time", "arguments": {}}')).toEqual([
      ['read_file', { path: 'a' }],
      ['get_current_time', {}],
    ]);
    expect(calls('Sure.\n```json\n{"tool_calls": [{"name": "read_file", "arguments": {"path": "f"}}]}\n```')).toEqual([['read_file', { path: 'f' }]]);
    const r = parseTextReply('I will read it: {"name": "read_file", "arguments": {"path": "n"}} now', known);
    expect(r).toMatchObject({ kind: 'calls', text: 'I will read it:' });
  });

  it('forgives trailing commas', () => {
    expect(calls('{"tool_calls": [{"name": "read_file", "arguments": {"path": "t",},},],}')).toEqual([['read_file', { path: 't' }]]);
  });

  it('takes the answer envelope, plain text and JSON that is no call as answers', () => {
    expect(parseTextReply('{"answer": "It is 42."}', known)).toEqual({ kind: 'answer', text: 'It is 42.' });
    expect(parseTextReply('{"final_answer": "done"}', known)).toEqual({ kind: 'answer', text: 'done' });
    expect(parseTextReply('The value is 42.', known)).toEqual({ kind: 'answer', text: 'The value is 42.' });
    // JSON in an answer that names no tool and has no arguments is not a call.
    expect(parseTextReply('The user is {"name": "Ada"}.', known)).toEqual({ kind: 'answer', text: 'The user is {"name": "Ada"}.' });
  });

  it('calls malformed what looks like a call but cannot be read, naming the tool when it can', () => {
    expect(parseTextReply('', known)).toEqual({ kind: 'malformed', problem: 'the reply was empty' });
    expect(parseTextReply('{"tool_calls": [{"name": "read_file", "arguments": {"path": "a"}', known)).toMatchObject({ kind: 'malformed', name: 'read_file' });
    expect(parseTextReply('{"tool_calls": []}', known)).toMatchObject({ kind: 'malformed', problem: expect.stringContaining('empty') });
    expect(parseTextReply('{"tool_calls": [{"arguments": {}}]}', known)).toMatchObject({ kind: 'malformed', problem: 'a call has no "name"' });
    expect(parseTextReply('{"tool_calls": [{"name": "read_file", "arguments": 5}]}', known)).toMatchObject({ kind: 'malformed', name: 'read_file' });
    expect(parseTextReply('<tool_call>read_file(path="a")</tool_call>', known)).toMatchObject({ kind: 'malformed' });
  });

  it('stays bounded on hostile text: a megabyte of braces, deep nesting', () => {
    expect(parseTextReply('{'.repeat(1 << 20), known).kind).toBe('answer');
    expect(parseTextReply(`{"tool_calls": ${'['.repeat(100_000)}`, known).kind).toBe('malformed');
    expect(parseTextReply(`x ${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`, known).kind).toBe('answer');
  }, 60_000);
});
