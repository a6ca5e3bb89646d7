import { describe, expect, it } from 'vitest';
import { builtinRegistry } from '../../deterministic/builtin-tools';
import type { ToolCall } from '../../deterministic/types';
import { judgeCall } from '../../workflows/turn/judge';
import { DEFAULT_POLICY } from '../support/harness';

const registry = builtinRegistry();
const ref = { $blob: 'a'.repeat(64), bytes: 8192, preview: 'first characters' };

describe('judgeCall with stored payload arguments', () => {
  it('validates a stored payload by its preview, runs it as the reference, and shows the policy the preview', () => {
    const call: ToolCall = { id: 't1-s1-c0', name: 'write_file', arguments: JSON.stringify({ path: 'a.txt', content: ref }), storedArgs: ['content'] };
    const j = judgeCall(call, registry, DEFAULT_POLICY, []);
    expect(j.result).toBeUndefined();
    expect(j.args).toEqual({ path: 'a.txt', content: ref });
    expect(j.policy).toMatchObject({ decision: 'ask' });
  });

  it('refuses an object the model wrote in place of a string: only the store marks references', () => {
    const call: ToolCall = { id: 't1-s1-c0', name: 'write_file', arguments: JSON.stringify({ path: 'a.txt', content: ref }) };
    const j = judgeCall(call, registry, DEFAULT_POLICY, []);
    expect(j.result).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
    expect(j.result!.message).toMatch(/content/);
  });
});
