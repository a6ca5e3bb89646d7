import { describe, expect, it } from 'vitest';
import { Conversations } from '../../../activities/store/conversations';
import { InMemoryMessageStore } from '../../../activities/store/message-store';
import { BLOB_ARG_OVER, callsView, MALFORMED_ARGS_MAX, RESULT_INLINE_MAX, resolveArgs, resultView, contentView, THOUGHT_INLINE_MAX } from '../../../activities/store/views';
import { builtinRegistry } from '../../../deterministic/builtin-tools';
import { toolOk } from '../../../deterministic/errors';
import type { ToolCall } from '../../../deterministic/types';

const registry = builtinRegistry();
const setup = () => {
  const store = new InMemoryMessageStore();
  const c = new Conversations(async () => store);
  return { c, put: (t: string) => c.putText('s1', t), get: (h: string) => c.getText('s1', h) };
};

describe('what the workflow sees of large values', () => {
  it("stores a large payload argument (a file's content) and leaves a reference with a preview, marking it as the store's", async () => {
    const { put, get } = setup();
    const content = 'z'.repeat(BLOB_ARG_OVER + 1);
    const call: ToolCall = { id: 't1-s1-c0', name: 'write_file', arguments: JSON.stringify({ path: 'a.txt', content }) };
    const [view] = await callsView([call], registry, put);
    expect(view!.storedArgs).toEqual(['content']);
    const args = JSON.parse(view!.arguments) as { path: string; content: { $blob: string; bytes: number; preview: string } };
    expect(args.path).toBe('a.txt');
    expect(args.content).toMatchObject({ bytes: content.length, preview: content.slice(0, 120) });
    expect(view!.arguments.length).toBeLessThan(400);
    expect(await resolveArgs(args, get)).toEqual({ path: 'a.txt', content });
  });

  it('keeps small payloads, arguments a policy decides on, and objects the model wrote itself as they are', async () => {
    const { put } = setup();
    const small: ToolCall = { id: 'a', name: 'write_file', arguments: JSON.stringify({ path: 'a.txt', content: 'short' }) };
    const command: ToolCall = { id: 'b', name: 'run_shell', arguments: JSON.stringify({ command: `echo ${'x'.repeat(5_000)}` }) };
    const forged: ToolCall = { id: 'c', name: 'write_file', arguments: JSON.stringify({ path: 'a', content: { $blob: 'f'.repeat(64), bytes: 1, preview: 'x' } }) };
    const views = await callsView([small, command, forged], registry, put);
    expect(views).toEqual([small, command, forged]);
  });

  it('cuts argument text that is not JSON (the workflow only reports it invalid) and a long thought beside tool calls', async () => {
    const { put } = setup();
    const [view] = await callsView([{ id: 'a', name: 'write_file', arguments: `{"path": ${'x'.repeat(10_000)}` }], registry, put);
    expect(view!.arguments.length).toBeLessThanOrEqual(MALFORMED_ARGS_MAX + 1);
    const thought = 't'.repeat(THOUGHT_INLINE_MAX + 500);
    expect(contentView(thought, true)!.length).toBe(THOUGHT_INLINE_MAX + 1);
    expect(contentView(thought, false)).toBe(thought);
  });

  it('stores a large tool result as the tool message the model will read, leaving its verdict for the workflow', async () => {
    const { c } = setup();
    expect(await resultView(toolOk({ n: 1 }), 't1-s1-c0', 's1', c)).toEqual(toolOk({ n: 1 }));
    const big = toolOk({ content: 'r'.repeat(RESULT_INLINE_MAX * 4) });
    const view = await resultView(big, 't1-s1-c0', 's1', c);
    expect(view).toMatchObject({ ok: true, stored: { ref: expect.stringMatching(/^[0-9a-f]{64}$/), tokens: expect.any(Number) } });
    expect(view).not.toHaveProperty('result');
    expect(JSON.parse(await c.getText('s1', view.stored!.ref))).toEqual({ role: 'tool', tool_call_id: 't1-s1-c0', content: JSON.stringify(big) });
  });
});
