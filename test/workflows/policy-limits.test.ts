/**
 * The policy inside the turn workflow at the limits: a run_shell command of the longest
 * accepted length, built to make backtracking regular expressions and a recursive analysis
 * slow, is judged within the workflow task (a task over 2 s would fail with a deadlock error and
 * the turn would never finish), with the RE2 engine bundled into the workflow code. Under the
 * default policy: what is denied is denied, what cannot be analysed asks.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SHELL_COMMAND } from '../../deterministic/builtin-tools';
import { freezePolicy } from '../../deterministic/policy/decide';
import { parsePolicy } from '../../deterministic/policy/schema';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { decideApprovals } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';

/** The default policy as a session started today keeps it (version 2, RE2 patterns). */
const POLICY = freezePolicy(parsePolicy(undefined));

let h: TestHarness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.stop();
  if (h?.home) rmSync(h.home, { recursive: true, force: true });
});

/** `head`, then `unit` repeated, then `tail`, exactly `length` characters long. */
function fill(length: number, head: string, unit: string, tail: string): string {
  const room = length - head.length - tail.length;
  const body = unit.repeat(Math.floor(room / unit.length));
  return head + body + ' '.repeat(room - body.length) + tail;
}

describe('the policy at the command length limit', () => {
  it('judges max-length pathological commands inside a turn that completes normally, recording the decisions', async () => {
    // `rm -rrr…r=` made the old deny-rm-recursive pattern backtrack quadratically (4.6 s at 60K).
    const rm = fill(MAX_SHELL_COMMAND, 'rm -', 'r', '= -rf x');
    // Substitutions nested as deep as the length allows, after a denied program.
    const depth = Math.floor((MAX_SHELL_COMMAND - 20) / 3);
    const nested = fill(MAX_SHELL_COMMAND, 'sudo id; echo ', ' ', `${'$('.repeat(depth)}x${')'.repeat(depth)}`);
    const tooLong = 'x'.repeat(MAX_SHELL_COMMAND + 1);
    expect([rm.length, nested.length]).toEqual([MAX_SHELL_COMMAND, MAX_SHELL_COMMAND]);

    const script = {
      steps: [
        {
          tool_calls: [
            { id: 'rm', name: 'run_shell', arguments: { command: rm } },
            { id: 'nested', name: 'run_shell', arguments: { command: nested } },
            { id: 'long', name: 'run_shell', arguments: { command: tooLong } },
          ],
        },
        { expect: { messages_contain: 'INVALID_ARGUMENTS' }, content: 'Denied as expected. HARNESS_OK' },
      ],
    };
    // Nesting past what the analysis parses is not understood, so it asks (naming why) rather
    // than deny on a guess: the person denies it here, and the turn goes on.
    const sessionId = newSessionId('policy-limits');
    const first = await h.turn(sessionId, scriptedConfig(script, {}, POLICY), 'run these');
    expect(first.kind).toBe('waiting');
    if (first.kind !== 'waiting' || first.state.pending?.kind !== 'approvals') throw new Error('expected an approval');
    const asked = first.state.pending.calls;
    expect(asked).toEqual([expect.objectContaining({ callId: expect.stringContaining('c1'), rule: 'unparsable', reason: expect.stringContaining('parentheses nested') })]);
    await decideApprovals(h.client, sessionId, { calls: asked.map((c) => ({ callId: c.callId, digest: c.digest ?? '' })), approve: false, reason: 'not understood' });
    const out = await waitForTurn(h.client, first.state.turnId, { pollMs: 100 });
    if (out.kind !== 'done') throw new Error(`turn is waiting: ${JSON.stringify(out.state)}`);
    const r = await h.complete(out.result);
    expect(r.terminated_by).toBe('final_answer');
    expect(r.answer).toBe('Denied as expected. HARNESS_OK');
    expect(r.toolCalls).toEqual([
      expect.objectContaining({ name: 'run_shell', ok: false, error_type: 'PERMISSION_DENIED', policy: expect.objectContaining({ decision: 'deny', rule: 'deny-rm-recursive' }) }),
      expect.objectContaining({ name: 'run_shell', ok: false, error_type: 'APPROVAL_DENIED', policy: expect.objectContaining({ decision: 'ask', rule: 'unparsable' }) }),
      expect.objectContaining({ name: 'run_shell', ok: false, error_type: 'INVALID_ARGUMENTS' }),
    ]);
    expect(r.toolCalls[2]).not.toHaveProperty('policy');
  }, 120_000);
});
