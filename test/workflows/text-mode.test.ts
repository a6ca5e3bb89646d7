/**
 * Text mode through real turns (dev server, worker, the scripted model as an OpenAI-compatible
 * endpoint), under the default policy: the tools go in the system message, not the tools field,
 * the reply is constrained by the envelope schema, a malformed reply is corrected and the turn
 * goes on, and past the bound the model reads INVALID_TOOL_CALL — never a failed workflow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionConfig } from '../../deterministic/session-config';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import { loadTrace } from '../../history/trace';
import { stateQuery } from '../../deterministic/messages';
import { DEFAULT_POLICY, endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';
import { toolResults, watchedTurn } from '../support/watched-turn';

let h: TestHarness;
let server: ScriptedModelServer;
beforeAll(async () => {
  [h, server] = await Promise.all([startHarness(), startScriptedModel()]);
});
afterAll(async () => {
  await h?.stop();
  await server?.close();
});

const envelope = (name: string, args: object) => JSON.stringify({ tool_calls: [{ name, arguments: args }] });
const cutShort = '{"tool_calls": [{"name": "read_file", "arguments": {"path": ';

function textConfig(): SessionConfig {
  const c = endpointConfig(server.url, {}, DEFAULT_POLICY);
  return { ...c, model: { provider: 'openai', model: 'tiny', baseUrl: server.url, toolMode: 'text' } };
}

describe('text mode', () => {
  it('writes with approval, reads after a correction, hears INVALID_TOOL_CALL past the bound, and answers', async () => {
    const sessionId = newSessionId('text');
    server.registerScript(sessionId, {
      steps: [
        { content: envelope('write_file', { path: 'notes.txt', content: 'value: 42\n' }) },
        { content: cutShort, corrected: [{ content: `<tool_call>${JSON.stringify({ name: 'read_file', arguments: { path: 'notes.txt' } })}</tool_call>` }] },
        { content: cutShort, corrected: [{ content: cutShort }, { content: '<tool_call>read_file notes.txt</tool_call>' }] },
        { expect: { last_message_contains: 'INVALID_TOOL_CALL' }, content: '{"answer": "The value is 42."}' },
      ],
    });
    const r = await watchedTurn(h, sessionId, textConfig(), 'What value is in notes.txt? Write it first.', { approve: true });
    expect([r.terminated_by, r.answer]).toEqual(['final_answer', 'The value is 42.']);
    expect(toolResults(r.messages).map((t) => (t.ok ? 'ok' : t.error_type))).toEqual(['ok', 'ok', 'INVALID_TOOL_CALL']);
    expect(r.toolMode).toMatchObject({ mode: 'text', source: 'configured' });

    // What the endpoint was sent: no tools field, the tools in the system message, the schema.
    const sent = server.requests.filter((q) => q.session === sessionId).map((q) => q.body as Record<string, unknown>);
    for (const body of sent) {
      expect(body.tools).toBeUndefined();
      expect(body.response_format).toMatchObject({ type: 'json_schema' });
      expect(body.max_tokens).toBe(4096);
      const system = (body.messages as { role: string; content: string }[])[0]!;
      expect(system.content).toContain('- read_file(path: string');
    }
    // Step 1, step 2 and its correction, step 3 and its two, step 4.
    expect(sent).toHaveLength(7);
    // A result comes back as a user message naming its call; the model's calls as the envelope.
    const last = sent.at(-1)!.messages as { role: string; content: string }[];
    expect(last.some((m) => m.role === 'user' && m.content.startsWith('Tool result (read_file, call t1-s2-c0)'))).toBe(true);
    expect(last.some((m) => m.role === 'assistant' && m.content === envelope('write_file', { path: 'notes.txt', content: 'value: 42\n' }))).toBe(true);

    // The trace shows the mode and the corrections of each call.
    const spans = (await loadTrace(h.client, `${sessionId}/turn-1`)).spans.map((b) => b.span);
    const llm = spans.filter((s) => s.type === 'llm_call').map((s) => [s.output.tool_mode, (s.output.corrections as unknown[] | undefined)?.length ?? 0]);
    expect(llm).toEqual([
      ['text', 0],
      ['text', 1],
      ['text', 2],
      ['text', 0],
    ]);
    const turn = spans.find((s) => s.type === 'turn')!;
    expect(turn.output.tool_mode).toMatch(/^text \(configured: /);
    expect(spans.filter((s) => s.type === 'llm_call').every((s) => s.output.constrained === true)).toBe(true);
  });

  it('the session keeps the mode for its next turn and shows it in its state', async () => {
    const sessionId = newSessionId('text-2');
    server.registerScript(sessionId, { steps: [{ content: '{"answer": "one"}' }, { content: 'two, as plain text' }] });
    const first = await watchedTurn(h, sessionId, textConfig(), 'first');
    const second = await watchedTurn(h, sessionId, textConfig(), 'second');
    expect([first.answer, second.answer]).toEqual(['one', 'two, as plain text']);
    expect(second.toolMode?.mode).toBe('text');
    const state = await h.client.workflow.getHandle(sessionId).query(stateQuery);
    expect(state.toolMode).toMatchObject({ mode: 'text', source: 'configured' });
  });
});
