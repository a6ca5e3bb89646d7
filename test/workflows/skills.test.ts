/** Skills end to end through a turn: index in the system message, use_skill, a script run in the sandbox. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endSession } from '../../client/session-client';
import { DEFAULT_POLICY, newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h?.stop());

describe('skills through a turn', () => {
  it('lists skills in the system message, loads a body with use_skill and runs word_count in the sandbox', async () => {
    const sessionId = newSessionId('skills');
    const script = {
      steps: [
        {
          expect: { system_contains: 'word_count' },
          tool_calls: [{ name: 'use_skill', arguments: { name: 'word_count' } }],
        },
        {
          expect: { last_message_contains: '/skills/word_count' },
          tool_calls: [{ name: 'write_file', arguments: { path: 'poem.txt', content: 'one two three\nfour five\n' } }],
        },
        { tool_calls: [{ name: 'run_shell', arguments: { command: 'python3 /skills/word_count/count.py poem.txt' } }] },
        { expect: { last_message_contains: 'lines=2 words=5 chars=24' }, content: 'The poem has 5 words.' },
      ],
    };
    // The default policy, as a user runs it: only the file write asks; the skill's own
    // script (mounted read-only) is allowed by the rule the skill catalog derives.
    const r = await h.finishApproving(sessionId, scriptedConfig(script, {}, DEFAULT_POLICY), 'Count the words of a poem.');
    expect(r.terminated_by).toBe('final_answer');
    expect(r.toolCalls.map((c) => [c.name, c.ok])).toEqual([
      ['use_skill', true],
      ['write_file', true],
      ['run_shell', true],
    ]);
    expect(r.asked).toEqual(['write_file: {"path":"poem.txt","content":"one two three\\nfour five\\n"}']);
    expect(r.toolCalls[2]).toMatchObject({ policy: { decision: 'allow', rule: 'skill:word_count/count.py' } });
    await endSession(h.client, sessionId);
  }, 60_000);

  it('reports an unknown skill as a structured error the model sees', async () => {
    const script = {
      steps: [
        { tool_calls: [{ name: 'use_skill', arguments: { name: 'no_such_skill' } }] },
        { expect: { last_message_contains: 'available skills' }, content: 'No such skill.' },
      ],
    };
    const r = await h.finish(newSessionId('skills'), scriptedConfig(script, {}, DEFAULT_POLICY), 'Use a skill that does not exist.');
    expect(r.toolCalls[0]).toMatchObject({ name: 'use_skill', ok: false, error_type: 'INVALID_ARGUMENTS' });
  });

  it("does not let a skill rule cover other arguments that reach outside the workspace, or a workspace copy of the script", async () => {
    const sessionId = newSessionId('skills');
    const script = {
      steps: [
        { tool_calls: [{ name: 'run_shell', arguments: { command: 'python3 /skills/word_count/count.py ../../etc/passwd' } }] },
        { expect: { last_message_contains: 'PERMISSION_DENIED' }, content: 'Denied as expected.' },
      ],
    };
    const r = await h.finish(sessionId, scriptedConfig(script, {}, DEFAULT_POLICY), 'Count the words of the password file.');
    expect(r.toolCalls[0]).toMatchObject({ name: 'run_shell', ok: false, error_type: 'PERMISSION_DENIED', policy: { decision: 'deny' } });
  });

  it('adds the skills of a session folder and skips a broken SKILL.md', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'harness-skills-'));
    mkdirSync(path.join(dir, 'greeter'));
    writeFileSync(path.join(dir, 'greeter', 'SKILL.md'), '---\nname: greeter\ndescription: Greets people politely by name.\n---\nSay hello.\n');
    mkdirSync(path.join(dir, 'broken'));
    writeFileSync(path.join(dir, 'broken', 'SKILL.md'), 'no front matter here\n');
    const script = {
      steps: [{ expect: { system_contains: 'greeter' }, tool_calls: [{ name: 'use_skill', arguments: { name: 'greeter' } }] }, { expect: { last_message_contains: 'Say hello' }, content: 'ok' }],
    };
    const config = { ...scriptedConfig(script, {}, DEFAULT_POLICY), skills: { folders: [dir] } };
    const r = await h.finish(newSessionId('skills'), config, 'Greet.');
    expect(r.terminated_by).toBe('final_answer');
    expect(r.toolCalls[0]).toMatchObject({ name: 'use_skill', ok: true });
  });
});
