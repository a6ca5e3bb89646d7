/**
 * Memory sent after the conversation, through a real turn: the model gets the same system message
 * at every step and the memory last, the message store never holds the memory, and the trace
 * shows it where it changed (`--full`) and in the whole request it exports.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { loadTrace } from '../../history/trace';
import { renderTrace } from '../../history/trace/render';
import { escapeForTerminal } from '../../machine/terminal/escape';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import { endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
let server: ScriptedModelServer;
beforeAll(async () => {
  h = await startHarness();
  server = await startScriptedModel();
});
afterAll(async () => {
  await h?.stop();
  await server?.close();
});

describe('memory after the conversation', () => {
  it('reaches the model last at every step, stays out of the store, and the trace shows it', async () => {
    const sessionId = newSessionId('notes');
    server.registerScript(sessionId, {
      steps: [
        { tool_calls: [{ name: 'remember', arguments: { key: 'colour', value: 'OCELOT-TEAL' } }] },
        { expect: { last_message_contains: '"ok":true' }, tool_calls: [{ name: 'get_current_time', arguments: {} }] },
        { content: 'Done. HARNESS_OK' },
      ],
    });
    const config = endpointConfig(server.url);
    h.declareUsed(config);
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'note the colour' });
    const out = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(out.kind === 'done' && out.result.terminated_by).toBe('final_answer');

    const bodies = server.requests.filter((q) => q.session === sessionId).map((q) => (q.body as { messages: { role: string; content: string }[] }).messages);
    expect(bodies).toHaveLength(3);
    expect(new Set(bodies.map((m) => m[0]!.content)).size).toBe(1);
    expect(bodies[0]!.at(-1)).toEqual({ role: 'user', content: 'note the colour' });
    for (const m of bodies.slice(1)) expect(m.at(-1)).toMatchObject({ role: 'system', content: expect.stringContaining('colour: OCELOT-TEAL') });
    // The third request starts with the second's messages but its last: the conversation grew, the memory moved after it.
    expect(bodies[2]!.slice(0, bodies[1]!.length - 1)).toEqual(bodies[1]!.slice(0, -1));

    const trace = await loadTrace(h.client, turnId, { store: { store: h.store, close: async () => {} }, wholeInput: true });
    const llms = trace.spans.map((s) => s.span).filter((s) => s.type === 'llm_call');
    expect(llms[0]!.input.notes).toBeUndefined();
    expect(String(llms[1]!.input.notes)).toContain('colour: OCELOT-TEAL');
    expect(llms[2]!.input.notes).toBeUndefined(); // unchanged since the call before
    const context = llms[2]!.input.context as { role: string; content: string }[];
    expect(context.at(-1)).toMatchObject({ role: 'system', content: expect.stringContaining('OCELOT-TEAL') });
    // Only the last system message holds it: no message of the stored conversation does (the remember call has it in its arguments).
    expect(context.filter((m) => String(m.content).includes('OCELOT-TEAL'))).toHaveLength(1);
    expect(renderTrace(trace, { full: true, color: false, escape: escapeForTerminal })).toContain('memory (after the conversation):');
  }, 120_000);
});
