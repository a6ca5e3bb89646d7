import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

/** A tool-call step that succeeds; distinct timezones keep the repeat guard quiet. */
const timeStep = (timezone: string) => ({ tool_calls: [{ name: 'get_current_time', arguments: { timezone } }] });
/** A tool-call step that fails with FILE_NOT_FOUND. */
const missingStep = (path: string) => ({ tool_calls: [{ name: 'read_file', arguments: { path } }] });

describe('turn termination', () => {
  it('ends with final_answer and the reply text when the model answers without tool calls', async () => {
    const r = await h.finish(
      newSessionId(),
      scriptedConfig({ steps: [timeStep('UTC'), { expect: { last_message_contains: '"ok":true' }, content: 'It is late. HARNESS_OK' }] }),
      'what time is it?',
    );
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('It is late. HARNESS_OK');
    expect(r.steps).toBe(2);
    expect(r.toolCalls).toEqual([expect.objectContaining({ step: 1, name: 'get_current_time', ok: true })]);
  });

  it('ends with finish and the finish tool answer when the model calls finish', async () => {
    const r = await h.finish(
      newSessionId(),
      scriptedConfig({
        steps: [
          { content: 'Wrapping up.', tool_calls: [{ name: 'finish', arguments: { answer: 'The answer via finish. HARNESS_OK' } }] },
          { content: 'this step must never be requested' },
        ],
      }),
      'finish please',
    );
    expect(r.terminated_by).toBe('finish');
    expect(r.answer).toBe('The answer via finish. HARNESS_OK');
    expect(r.steps).toBe(1);
    expect(r.modelCalls).toBe(1);
  });

  it('stops with max_steps at the per-turn maxSteps when the model keeps calling tools', async () => {
    const steps = ['UTC', 'Europe/Paris', 'Asia/Tokyo', 'America/New_York', 'Africa/Cairo'].map(timeStep);
    const r = await h.finish(newSessionId(), scriptedConfig({ steps: [...steps, { content: 'never' }] }), 'loop', 3);
    expect(r.terminated_by).toBe('max_steps');
    expect(r.steps).toBe(3);
    expect(r.modelCalls).toBe(3);
    expect(r.toolCalls).toHaveLength(3);
    expect(r.answer).toMatch(/3 steps/);
  });

  it('stops with max_steps at the session default limits.maxSteps when the message sets none', async () => {
    const steps = ['UTC', 'Europe/Paris', 'Asia/Tokyo', 'America/New_York'].map(timeStep);
    const r = await h.finish(newSessionId(), scriptedConfig({ steps: [...steps, { content: 'never' }] }, { maxSteps: 2 }), 'loop');
    expect(r.terminated_by).toBe('max_steps');
    expect(r.steps).toBe(2);
    expect(r.toolCalls.map((c) => c.ok)).toEqual([true, true]);
  });

  it('stops with error_limit after three consecutive failed steps', async () => {
    const r = await h.finish(
      newSessionId(),
      scriptedConfig({ steps: [missingStep('a.txt'), missingStep('b.txt'), missingStep('c.txt'), { content: 'never' }] }),
      'read files',
    );
    expect(r.terminated_by).toBe('error_limit');
    expect(r.steps).toBe(3);
    expect(r.toolCalls.map((c) => c.error_type)).toEqual(['FILE_NOT_FOUND', 'FILE_NOT_FOUND', 'FILE_NOT_FOUND']);
  });

  it('resets the consecutive failure count after a successful step', async () => {
    const r = await h.finish(
      newSessionId(),
      scriptedConfig({
        steps: [
          missingStep('a.txt'),
          missingStep('b.txt'),
          timeStep('UTC'),
          missingStep('c.txt'),
          { expect: { last_message_contains: 'FILE_NOT_FOUND' }, ...missingStep('d.txt') },
          { content: 'Recovered. HARNESS_OK' },
        ],
      }),
      'read files',
    );
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('Recovered. HARNESS_OK');
    expect(r.steps).toBe(6);
    expect(r.toolCalls.map((c) => c.ok)).toEqual([false, false, true, false, false]);
  });

  it('warns the model on the third identical call and stops with repeated_action on the fourth', async () => {
    const same = { tool_calls: [{ name: 'get_current_time', arguments: { timezone: 'UTC' } }] };
    const r = await h.finish(
      newSessionId(),
      scriptedConfig({
        steps: [
          same,
          { expect: { last_message_contains: '"ok":true' }, ...same },
          same,
          // The warning is the last message of the request that follows the third repetition.
          { expect: { last_message_contains: '[harness]', messages_contain: 'same arguments 3 times' }, ...same },
          { content: 'never' },
        ],
      }),
      'repeat',
    );
    expect(r.terminated_by).toBe('repeated_action');
    expect(r.steps).toBe(4);
    // The fourth call is stopped, not executed: three executions only.
    expect(r.toolCalls).toHaveLength(3);
    const warnings = r.messages.filter((m) => m.role === 'user' && m.content.startsWith('[harness]'));
    expect(warnings).toHaveLength(1);
    const last = r.messages.at(-1)!;
    expect(last.role).toBe('tool');
    expect((last as { content: string }).content).toContain('REPEATED_ACTION');
  });

  it('treats calls that differ only in argument key order or spacing as the same action', async () => {
    // The default policy asks about each write; the person approves every one.
    const r = await h.finishApproving(
      newSessionId(),
      scriptedConfig({
        steps: [
          { tool_calls: [{ name: 'read_file', arguments: '{"path": "x.txt", "max_bytes": 10}' }] },
          { tool_calls: [{ name: 'read_file', arguments: '{"max_bytes":10,"path":"x.txt"}' }] },
          { tool_calls: [{ name: 'write_file', arguments: { path: 'x.txt', content: 'hello' } }] },
          { tool_calls: [{ name: 'write_file', arguments: { content: 'hello', path: 'x.txt' } }] },
          { tool_calls: [{ name: 'write_file', arguments: '{ "path" : "x.txt" , "content" : "hello" }' }] },
          { expect: { last_message_contains: '[harness]' }, tool_calls: [{ name: 'write_file', arguments: { path: 'x.txt', content: 'hello' } }] },
          { content: 'never' },
        ],
      }),
      'repeat with shuffled keys',
    );
    expect(r.terminated_by).toBe('repeated_action');
    expect(r.steps).toBe(6);
    expect(r.asked.every((a) => a.startsWith('write_file: '))).toBe(true);
  });
  it('treats a finish call without an answer as INVALID_ARGUMENTS and keeps the turn going', async () => {
    const r = await h.finish(
      newSessionId(),
      scriptedConfig({
        steps: [
          { tool_calls: [{ name: 'finish', arguments: {} }] },
          { expect: { last_message_contains: 'INVALID_ARGUMENTS' }, tool_calls: [{ name: 'finish', arguments: { answer: 'Properly finished. HARNESS_OK' } }] },
        ],
      }),
      'finish badly first',
    );
    expect(r.terminated_by).toBe('finish');
    expect(r.answer).toBe('Properly finished. HARNESS_OK');
    expect(r.toolCalls.map((c) => [c.ok, c.error_type])).toEqual([
      [false, 'INVALID_ARGUMENTS'],
      [true, undefined],
    ]);
  });
});
