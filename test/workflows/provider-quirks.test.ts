/**
 * Provider quirks, each against a fake endpoint that behaves so (test/support/quirky-endpoint.ts),
 * through real turns under the default policy and the default tool mode (auto): missing usage,
 * a reply cut at the cap, reasoning fields, several calls without ids beside content, an empty
 * reply, and a server that drops the tools field (auto picks text mode; the session keeps it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionConfig } from '../../deterministic/session-config';
import { loadTrace } from '../../history/trace';
import { stateQuery } from '../../deterministic/messages';
import { DEFAULT_POLICY, endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';
import { startQuirkyEndpoint, type QuirkyEndpoint, type QuirkyReply } from '../support/quirky-endpoint';
import { toolResults, watchedTurn } from '../support/watched-turn';

let h: TestHarness;
let endpoint: QuirkyEndpoint;
let dropping: QuirkyEndpoint;
beforeAll(async () => {
  [h, endpoint, dropping] = await Promise.all([startHarness(), startQuirkyEndpoint(), startQuirkyEndpoint({ dropTools: true })]);
});
afterAll(async () => {
  await h?.stop();
  await endpoint?.close();
  await dropping?.close();
});

const CAP = 64;
let models = 0;
/** A session on an endpoint; each gets a model name of its own, so auto decides afresh (decisions are cached per endpoint and model). */
function config(url: string): SessionConfig {
  const c = endpointConfig(url, { maxOutputTokens: CAP }, DEFAULT_POLICY);
  return { ...c, model: { provider: 'openai', model: `quirky-${++models}`, baseUrl: url } };
}
const call = (name: string, args: object, id?: string) => ({ ...(id ? { id } : {}), type: 'function', function: { name, arguments: JSON.stringify(args) } });
const llmSpans = async (turnId: string) => (await loadTrace(h.client, turnId)).spans.map((b) => b.span).filter((s) => s.type === 'llm_call');

async function turn(replies: QuirkyReply[], text = 'go', on: QuirkyEndpoint = endpoint, sessionId = newSessionId('quirk'), cfg = config(on.url)) {
  on.script(sessionId, replies);
  const r = await watchedTurn(h, sessionId, cfg, text);
  return { r, sessionId, sent: on.requests(sessionId).map((q) => q.body) };
}

describe('provider quirks', () => {
  it('no usage: estimated with the tokenizer and marked so', async () => {
    const { r, sessionId } = await turn([
      { message: { content: null, tool_calls: [call('get_current_time', {}, 'a')] }, usage: null },
      { message: { content: 'It is now.' }, usage: null },
    ]);
    expect(r.answer).toBe('It is now.');
    expect(r.usage.prompt_tokens).toBeGreaterThan(100); // the system message and the tools
    expect(r.usage.completion_tokens).toBeGreaterThan(0);
    expect((await llmSpans(`${sessionId}/turn-1`)).map((s) => s.output.usage_estimated)).toEqual([true, true]);
  });

  it('finish_reason length: the cap is sent as max_tokens, the model is told its reply was cut; cut again past the bound, the answer says so', async () => {
    const cut = { message: { content: 'Once upon a time there was a very long story that' }, finish_reason: 'length' };
    const told = await turn([cut, { message: { content: 'Short answer.' } }]);
    expect(told.r.answer).toBe('Short answer.');
    expect(told.sent.map((b) => b.max_tokens)).toEqual([CAP, CAP]);
    expect(told.sent.every((b) => b.max_completion_tokens === undefined)).toBe(true);
    const correction = told.sent[1]!.messages.at(-1) as { role: string; content: string };
    expect(correction).toMatchObject({ role: 'user', content: expect.stringContaining(`cut off at the output limit of ${CAP} tokens`) });

    const never = await turn([cut, cut, cut]);
    expect(never.r.terminated_by).toBe('final_answer');
    expect(never.r.answer).toMatch(new RegExp(`\\[The reply was cut off at the output limit \\(${CAP} tokens\\)\\.\\]$`));
    const [span] = await llmSpans(`${never.sessionId}/turn-1`);
    expect([span!.output.truncated, (span!.output.corrections as unknown[]).length]).toEqual([true, 2]);
  });

  it('reasoning_content: shown in the trace, never sent back (the endpoint refuses requests that do)', async () => {
    const { r, sessionId, sent } = await turn([
      { message: { content: null, reasoning_content: 'The user wants the time: call the clock.', tool_calls: [call('get_current_time', {}, 'a')] } },
      { message: { content: 'Done.', reasoning_content: 'I have the time now.' } },
    ]);
    expect([r.terminated_by, r.answer]).toEqual(['final_answer', 'Done.']);
    expect(JSON.stringify(sent)).not.toContain('reasoning');
    expect((await llmSpans(`${sessionId}/turn-1`)).map((s) => s.output.reasoning)).toEqual(['The user wants the time: call the clock.', 'I have the time now.']);
  });

  it('several calls in one reply, without ids, beside content: all run with ids of their own, the content kept', async () => {
    const { r, sent } = await turn([
      { message: { content: 'Let me check both.', tool_calls: [call('get_current_time', {}), call('read_file', { path: 'missing.txt' })] }, finish_reason: 'tool_calls' },
      { message: { content: 'Both checked.' } },
    ]);
    expect(r.answer).toBe('Both checked.');
    expect(toolResults(r.messages).map((t) => (t.ok ? 'ok' : t.error_type))).toEqual(['ok', 'FILE_NOT_FOUND']);
    const assistant = r.messages.find((m) => m.role === 'assistant' && m.tool_calls?.length);
    expect(assistant).toMatchObject({ content: 'Let me check both.' });
    const ids = (assistant as { tool_calls: { id: string }[] }).tool_calls.map((c) => c.id);
    expect(new Set(ids).size).toBe(2);
    // The endpoint gets its calls back with the ids the harness gave, each result naming its call.
    const back = sent[1]!.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
    expect(back).toEqual(ids);
  });

  it('an empty reply is asked again', async () => {
    const { r, sent } = await turn([{ message: { content: '' } }, { message: { content: 'Now an answer.' } }]);
    expect(r.answer).toBe('Now an answer.');
    expect((sent[1]!.messages.at(-1) as { content: string }).content).toContain('the reply was empty');
  });
});

describe('auto against a server that drops the tools field', () => {
  it('probes once, picks text mode (constrained), asks the call again in it; the next turn keeps the mode without probing', async () => {
    const sessionId = newSessionId('auto-text');
    const cfg = config(dropping.url);
    const first = await turn(
      [
        { message: { content: 'I cannot look at the clock.' } },
        { message: { content: '{"tool_calls": [{"name": "get_current_time", "arguments": {}}]}' } },
        { message: { content: '{"answer": "It is noon."}' } },
      ],
      'What time is it?',
      dropping,
      sessionId,
      cfg,
    );
    expect([first.r.answer, toolResults(first.r.messages).map((t) => t.ok)]).toEqual(['It is noon.', [true]]);
    expect(first.r.toolMode).toMatchObject({ mode: 'text', constrained: true, source: 'probe', reason: expect.stringContaining('dropped the tools') });
    expect(dropping.probes(sessionId)).toHaveLength(3);
    // The first request went natively; the rest in text mode with the schema.
    expect(first.sent.map((b) => [Array.isArray(b.tools), b.response_format !== undefined])).toEqual([
      [true, false],
      [false, true],
      [false, true],
    ]);

    const second = await turn([{ message: { content: '{"answer": "Still noon."}' } }], 'And now?', dropping, sessionId, cfg);
    expect(second.r.answer).toBe('Still noon.');
    expect(dropping.probes(sessionId)).toHaveLength(3);
    expect((await h.client.workflow.getHandle(sessionId).query(stateQuery)).toolMode?.mode).toBe('text');
  });
});
