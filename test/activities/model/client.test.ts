import { describe, expect, it } from 'vitest';
import { toOpenAIMessages } from '../../../activities/model/client';
import type { ChatMessage } from '../../../deterministic/types';

describe('toOpenAIMessages', () => {
  it("sends the provider's own call ids back to it, and the harness id where the provider gave none", () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 't1-s1-c0', providerId: 'call_abc', name: 'list_files', arguments: '{}' }] },
      { role: 'tool', tool_call_id: 't1-s1-c0', content: '{"ok":true}' },
      { role: 'assistant', content: null, tool_calls: [{ id: 't1-s2-c0', name: 'list_files', arguments: '{}' }] },
      { role: 'tool', tool_call_id: 't1-s2-c0', content: '{"ok":true}' },
    ];
    const out = toOpenAIMessages(messages) as Array<Record<string, unknown>>;
    expect(out[1]).toMatchObject({ tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'list_files', arguments: '{}' } }] });
    expect(out[2]).toEqual({ role: 'tool', tool_call_id: 'call_abc', content: '{"ok":true}' });
    expect(out[3]).toMatchObject({ tool_calls: [{ id: 't1-s2-c0' }] });
    expect(out[4]).toMatchObject({ tool_call_id: 't1-s2-c0' });
    expect(JSON.stringify(out)).not.toContain('providerId');
  });
});
