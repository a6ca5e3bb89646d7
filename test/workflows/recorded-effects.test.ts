/**
 * How a rerun's step answers its calls that leave the sandbox, judged under the default policy:
 * with the recorded result when the record holds the same call, refused (never made) when it
 * does not; calls of the sandbox's side and calls already judged are left as they were.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BUILTIN_TOOLS } from '../../deterministic/builtin-tools';
import { ToolRegistry, defineTool } from '../../deterministic/tools';
import type { RecordedEffects } from '../../deterministic/fork';
import type { ToolCall } from '../../deterministic/types';
import { answerFromRecord } from '../../workflows/turn/recorded-effects';
import { judgeStep } from '../../workflows/turn/judge';
import { DEFAULT_POLICY } from '../support/harness';

const sendOrder = defineTool({ name: 'send_order', description: 'Sends an order to the supplier.', parameters: z.object({ item: z.string() }), risk: 'write', source: 'custom', runsIn: 'activity' });
const mcpSend = defineTool({ name: 'mcp__counter__send', description: 'Sends a message (MCP).', parameters: z.object({ text: z.string() }), risk: 'network', source: 'mcp:counter', runsIn: 'activity', mcpTool: 'send' });
const registry = new ToolRegistry([...BUILTIN_TOOLS, sendOrder, mcpSend]);
const call = (id: string, name: string, args: unknown): ToolCall => ({ id, name, arguments: JSON.stringify(args) });
const stored = { ok: true, stored: { ref: 'b'.repeat(64), tokens: 12 } };

describe('answerFromRecord', () => {
  it('gives a recorded call its recorded result and marks it replayed; sandbox calls are left to run', () => {
    const judged = judgeStep(
      [call('t1-s1-c0', 'http_request', { url: 'https://api.example.com/x' }), call('t1-s1-c1', 'send_order', { item: 'tea' }), call('t1-s1-c2', 'write_file', { path: 'a.txt', content: 'x' })],
      registry,
      DEFAULT_POLICY,
      [],
    );
    const recorded: RecordedEffects = {
      from: 'src/turn-2',
      calls: [
        { callId: 't1-s1-c0', tool: 'http_request', outcome: stored },
        { callId: 't1-s1-c1', tool: 'send_order', outcome: { ok: false, error_type: 'APPROVAL_DENIED', message: 'Denied.' } },
      ],
    };
    answerFromRecord(judged, recorded);
    expect(judged.map((j) => [j.result, j.replayed])).toEqual([
      [stored, 'src/turn-2'],
      [{ ok: false, error_type: 'APPROVAL_DENIED', message: 'Denied.' }, 'src/turn-2'],
      [undefined, undefined],
    ]);
  });

  it('refuses a call that leaves the sandbox when the record holds no result for it, another tool at its place, or nothing at all', () => {
    const judged = judgeStep(
      [call('t1-s2-c0', 'mcp__counter__send', { text: 'hi' }), call('t1-s2-c1', 'remember_longterm', { text: 'a fact' }), call('t1-s2-c2', 'http_request', { url: 'https://x.example/' })],
      registry,
      DEFAULT_POLICY,
      [],
    );
    answerFromRecord(judged, { from: 'src/turn-1', calls: [{ callId: 't1-s2-c0', tool: 'mcp__counter__send' }, { callId: 't1-s2-c1', tool: 'http_request', outcome: stored }] });
    for (const j of judged) {
      expect(j.result).toMatchObject({ ok: false, error_type: 'PERMISSION_DENIED', recoverable: false });
      expect(j.result!.message).toMatch(/^Not made: a rerun answers calls of .* from the record of src\/turn-1/);
      expect(j.replayed).toBeUndefined();
    }
  });

  it('keeps the result of a call the policy denied or that was invalid', () => {
    const policy = { ...DEFAULT_POLICY, rules: [{ id: 'no-example', tool: 'http_request', decision: 'deny' as const, reason: 'not this host', when: { host: ['api.example.com'] } }, ...DEFAULT_POLICY.rules] };
    const judged = judgeStep([call('t1-s1-c0', 'http_request', { url: 'https://api.example.com/x' }), call('t1-s1-c1', 'send_order', { qty: 2 })], registry, policy, []);
    const before = judged.map((j) => j.result);
    answerFromRecord(judged, { from: 'src/turn-1', calls: [{ callId: 't1-s1-c0', tool: 'http_request', outcome: stored }, { callId: 't1-s1-c1', tool: 'send_order', outcome: stored }] });
    expect(judged.map((j) => j.result)).toEqual(before);
    expect(before.map((r) => r?.error_type)).toEqual(['PERMISSION_DENIED', 'INVALID_ARGUMENTS']);
    expect(judged.every((j) => j.replayed === undefined)).toBe(true);
  });
});
