/** compareMessages: the first place a rerun's conversation differs from its record. */
import { describe, expect, it } from 'vitest';
import { compareMessages } from '../../activities/rerun-compare';
import type { ChatMessage } from '../../deterministic/types';

const call = (id: string, name: string, args: unknown): ChatMessage => ({ role: 'assistant', content: null, tool_calls: [{ id, name, arguments: JSON.stringify(args) }] });
const result = (id: string, r: unknown): ChatMessage => ({ role: 'tool', tool_call_id: id, content: JSON.stringify(r) });
const answer = (text: string): ChatMessage => ({ role: 'assistant', content: text });

describe('compareMessages', () => {
  it('finds no divergence when only the time and durations differ', () => {
    const rec = [call('a', 'get_current_time', {}), result('a', { ok: true, result: { iso: '2026-01-01T00:00:00Z', unix_ms: 1, timezone: 'UTC' } }), call('b', 'run_shell', { command: 'ls' }), result('b', { ok: true, result: { stdout: 'x', duration_ms: 5 } }), answer('done')];
    const now = [call('c', 'get_current_time', {}), result('c', { ok: true, result: { iso: '2026-11-30T00:00:00Z', unix_ms: 2, timezone: 'UTC' } }), call('d', 'run_shell', { command: 'ls' }), result('d', { ok: true, result: { stdout: 'x', duration_ms: 9 } }), answer('done')];
    expect(compareMessages(rec, now)).toEqual({ compared: 3, diverged: false });
  });

  it('names the step, call and tool of the first different result', () => {
    const rec = [call('a', 'read_file', { path: 'x' }), result('a', { ok: true, result: { content: 'alpha' } }), answer('ok')];
    const now = [call('a', 'read_file', { path: 'x' }), result('a', { ok: false, error_type: 'FILE_NOT_FOUND' }), answer('ok')];
    expect(compareMessages(rec, now)).toMatchObject({ diverged: true, first: { step: 1, callId: 'a', tool: 'read_file', what: 'a different result of read_file', recorded: expect.stringContaining('alpha'), now: expect.stringContaining('FILE_NOT_FOUND') } });
  });

  it('reports different calls and a rerun that stopped early', () => {
    expect(compareMessages([call('a', 'ls', {})], [call('a', 'rm', {})])).toMatchObject({ diverged: true, first: { step: 1, what: 'different tool calls' } });
    expect(compareMessages([call('a', 'ls', {}), result('a', { ok: true }), answer('x')], [call('a', 'ls', {}), result('a', { ok: true })])).toMatchObject({ diverged: true, first: { step: 2, what: 'the rerun stopped here' } });
  });
});
