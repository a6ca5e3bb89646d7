import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, ToolResult } from '../../deterministic/types';
import { ALLOW_ALL, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

/** The tool results the turn sent back to the model, in order. */
function toolResults(messages: ChatMessage[]): ToolResult[] {
  return messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content) as ToolResult);
}

describe('tool errors are results the model sees', () => {
  it('reports malformed argument JSON as INVALID_ARGUMENTS and continues to a final answer', async () => {
    const r = await h.finish(
      newSessionId(),
      scriptedConfig({
        steps: [
          { tool_calls: [{ name: 'read_file', arguments: '{"path": ' }] },
          { expect: { last_message_contains: 'INVALID_ARGUMENTS' }, content: 'I will fix my JSON. HARNESS_OK' },
        ],
      }),
      'read something',
    );
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('I will fix my JSON. HARNESS_OK');
    const [res] = toolResults(r.messages);
    expect(res).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS', recoverable: true });
    expect(res!.message).toMatch(/not valid JSON/);
    // The raw text is kept as the call's arguments so the trace shows what the model sent.
    expect(r.toolCalls).toEqual([expect.objectContaining({ name: 'read_file', ok: false, error_type: 'INVALID_ARGUMENTS', args: '{"path": ' })]);
  });

  it('reports an unknown tool as UNKNOWN_TOOL with the available tools as a suggestion', async () => {
    const r = await h.finish(
      newSessionId(),
      scriptedConfig({
        steps: [
          { tool_calls: [{ name: 'teleport', arguments: { to: 'mars' } }] },
          { expect: { last_message_contains: 'UNKNOWN_TOOL' }, content: 'No teleport then. HARNESS_OK' },
        ],
      }),
      'go to mars',
    );
    expect(r.terminated_by).toBe('final_answer');
    const [res] = toolResults(r.messages);
    expect(res).toMatchObject({ ok: false, error_type: 'UNKNOWN_TOOL' });
    expect(res!.message).toContain('teleport');
    expect(res!.suggestion).toContain('read_file');
    expect(r.toolCalls[0]).toMatchObject({ name: 'teleport', ok: false, error_type: 'UNKNOWN_TOOL' });
  });

  it('reports an argument of the wrong type as INVALID_ARGUMENTS naming the field', async () => {
    const r = await h.finish(
      newSessionId(),
      scriptedConfig({
        steps: [
          { tool_calls: [{ name: 'read_file', arguments: { path: 42 } }] },
          { expect: { last_message_contains: 'INVALID_ARGUMENTS' }, content: 'Path must be text. HARNESS_OK' },
        ],
      }),
      'read 42',
    );
    expect(r.terminated_by).toBe('final_answer');
    const [res] = toolResults(r.messages);
    expect(res).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS' });
    expect(res!.message).toMatch(/\bpath\b/);
    expect(r.toolCalls[0]).toMatchObject({ ok: false, error_type: 'INVALID_ARGUMENTS', args: { path: 42 } });
  });

  it('refuses parent-directory traversal and absolute paths with PATH_OUTSIDE_WORKSPACE', async () => {
    // The tool's own confinement, below the policy: the default rules deny these paths first
    // (the next test), so this one runs with the policy off to reach the tool.
    const r = await h.finish(
      newSessionId(),
      scriptedConfig(
        {
          steps: [
            { tool_calls: [{ name: 'read_file', arguments: { path: '../../etc/passwd' } }] },
            { expect: { last_message_contains: 'PATH_OUTSIDE_WORKSPACE' }, tool_calls: [{ name: 'read_file', arguments: { path: '/etc/passwd' } }] },
            { expect: { last_message_contains: 'PATH_OUTSIDE_WORKSPACE' }, content: 'Cannot leave the workspace. HARNESS_OK' },
          ],
        },
        {},
        ALLOW_ALL,
      ),
      'read passwd',
    );
    expect(r.terminated_by).toBe('final_answer');
    expect(r.toolCalls.map((c) => c.error_type)).toEqual(['PATH_OUTSIDE_WORKSPACE', 'PATH_OUTSIDE_WORKSPACE']);
    for (const res of toolResults(r.messages)) {
      expect(res.ok).toBe(false);
      expect(JSON.stringify(res)).not.toContain('root:');
    }
  });

  it('under the default policy the same paths are denied before the tool runs, with the rule as the reason', async () => {
    const r = await h.finish(
      newSessionId(),
      scriptedConfig({
        steps: [
          { tool_calls: [{ name: 'read_file', arguments: { path: '../../etc/passwd' } }] },
          { expect: { last_message_contains: 'PERMISSION_DENIED' }, tool_calls: [{ name: 'read_file', arguments: { path: '/etc/passwd' } }] },
          { expect: { last_message_contains: 'paths must stay inside the workspace' }, content: 'Cannot leave the workspace. HARNESS_OK' },
        ],
      }),
      'read passwd',
    );
    expect(r.terminated_by).toBe('final_answer');
    expect(r.toolCalls.map((c) => c.error_type)).toEqual(['PERMISSION_DENIED', 'PERMISSION_DENIED']);
    expect(JSON.stringify(r.messages)).not.toContain('root:');
  });

  it('refuses a symlink inside the workspace that leads outside it with PATH_OUTSIDE_WORKSPACE', async () => {
    const sessionId = newSessionId();
    const workspace = path.join(h.home, 'workspaces', sessionId);
    mkdirSync(workspace, { recursive: true });
    symlinkSync('/etc', path.join(workspace, 'link'));
    // The policy sees a path inside the workspace: the read runs, the write asks and is approved,
    // and the tool itself finds where the link leads.
    const r = await h.finishApproving(
      sessionId,
      scriptedConfig({
        steps: [
          { tool_calls: [{ name: 'read_file', arguments: { path: 'link/passwd' } }] },
          { expect: { last_message_contains: 'PATH_OUTSIDE_WORKSPACE' }, tool_calls: [{ name: 'write_file', arguments: { path: 'link/evil.txt', content: 'x' } }] },
          { expect: { last_message_contains: 'PATH_OUTSIDE_WORKSPACE' }, content: 'The link leads outside. HARNESS_OK' },
        ],
      }),
      'follow the link',
    );
    expect(r.terminated_by).toBe('final_answer');
    expect(r.asked).toEqual(['write_file: {"path":"link/evil.txt","content":"x"}']);
    expect(r.toolCalls.map((c) => c.error_type)).toEqual(['PATH_OUTSIDE_WORKSPACE', 'PATH_OUTSIDE_WORKSPACE']);
    expect(JSON.stringify(r.messages)).not.toContain('root:');
  });

  it('round-trips write_file then read_file in the same turn inside the session workspace', async () => {
    const sessionId = newSessionId();
    const r = await h.finishApproving(
      sessionId,
      scriptedConfig({
        steps: [
          { tool_calls: [{ name: 'write_file', arguments: { path: 'notes/plan.md', content: 'step one: ROUNDTRIP-4711\n' } }] },
          { expect: { last_message_contains: '"bytes_written":25' }, tool_calls: [{ name: 'read_file', arguments: { path: 'notes/plan.md' } }] },
          { expect: { last_message_contains: 'ROUNDTRIP-4711' }, content: 'The plan says ROUNDTRIP-4711. HARNESS_OK' },
        ],
      }),
      'write and read',
    );
    expect(r.terminated_by).toBe('final_answer');
    expect(r.toolCalls.map((c) => [c.name, c.ok])).toEqual([
      ['write_file', true],
      ['read_file', true],
    ]);
    expect(readFileSync(path.join(h.home, 'workspaces', sessionId, 'notes', 'plan.md'), 'utf8')).toBe('step one: ROUNDTRIP-4711\n');
  });

  it('records every call with its step, ok flag and error type in result.toolCalls', async () => {
    // The write asks and is approved; the absolute path is denied by the default rules.
    const r = await h.finishApproving(
      newSessionId(),
      scriptedConfig({
        steps: [
          {
            tool_calls: [
              { name: 'read_file', arguments: { path: 'missing.txt' } },
              { name: 'nope', arguments: {} },
              { name: 'write_file', arguments: { path: 'ok.txt', content: 'fine' } },
            ],
          },
          { tool_calls: [{ name: 'read_file', arguments: { path: '/abs' } }, { name: 'read_file', arguments: '{oops' }] },
          { content: 'Done. HARNESS_OK' },
        ],
      }),
      'mixed',
    );
    expect(r.terminated_by).toBe('final_answer');
    expect(r.toolCalls.map(({ step, name, ok, error_type }) => ({ step, name, ok, error_type }))).toEqual([
      { step: 1, name: 'read_file', ok: false, error_type: 'FILE_NOT_FOUND' },
      { step: 1, name: 'nope', ok: false, error_type: 'UNKNOWN_TOOL' },
      { step: 1, name: 'write_file', ok: true, error_type: undefined },
      { step: 2, name: 'read_file', ok: false, error_type: 'PERMISSION_DENIED' },
      { step: 2, name: 'read_file', ok: false, error_type: 'INVALID_ARGUMENTS' },
    ]);
    // Each tool message answers its own call id.
    const callIds = r.messages.filter((m) => m.role === 'tool').map((m) => (m as { tool_call_id: string }).tool_call_id);
    expect(callIds).toEqual(r.toolCalls.map((c) => c.callId));
    expect(new Set(callIds).size).toBe(5);
  });
});
