/**
 * A question from the agent outlives the CLI process that started the turn: `run` exits 3 and
 * says how to answer, `status` shows the question, and another process answers it.
 */
import { describe, expect, it } from 'vitest';
import { waitForTurn } from '../../client/turn-wait';
import { newSessionId } from '../support/harness';
import { describeResult, parseJson, stackLines, writeScript } from '../support/cli';
import { useCliHarness } from '../support/cli-harness';

/** Asks for a colour, then expects the answer in the tool result. */
function colourScript(colour: string) {
  return {
    steps: [
      { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
      { expect: { last_message_contains: colour }, content: `You chose ${colour}. HARNESS_OK` },
    ],
  };
}

const s = useCliHarness('harness-cli-ask-');

describe('a turn waiting for the user, driven from separate CLI processes', () => {
  const sessionId = newSessionId('cli-ask');
  let started = false;

  it('`run --json` exits 3 with the pending question and says how to answer', async () => {
    const script = writeScript(s.dir, colourScript('blue'));
    const r = await s.cli(['run', '--model', `scripted:${script}`, 'pick a colour', '--json', '--session', sessionId]);
    expect(r.code, describeResult(r)).toBe(3);
    const out = parseJson<Record<string, unknown>>(r);
    expect(Object.keys(out).sort()).toEqual(['pending', 'session_id', 'status', 'workflow_id']);
    expect(out).toMatchObject({
      session_id: sessionId,
      workflow_id: `${sessionId}/turn-1`,
      status: 'waiting_for_user',
      pending: { question: 'Which colour?' },
    });
    expect(r.stderr).toContain(`harness answer ${sessionId}`);
    expect(stackLines(r.stderr)).toEqual([]);
    started = true;
  });

  it('`status --json` shows the session waiting for the user with the question', async () => {
    expect(started, 'the run must have left the question pending').toBe(true);
    // The turn tells its session by signal; give the session a moment to record it.
    await expect
      .poll(
        async () => {
          const r = await s.cli(['status', sessionId, '--json']);
          return r.code === 0 ? parseJson<{ status: string }>(r).status : describeResult(r);
        },
        { timeout: 20_000, interval: 250 },
      )
      .toBe('waiting_for_user');
    const r = await s.cli(['status', sessionId, '--json']);
    expect(parseJson(r)).toMatchObject({ session_id: sessionId, status: 'waiting_for_user', pending: { question: 'Which colour?' } });
  });

  it('`answer --json` from another process finishes the turn and prints the run result', async () => {
    expect(started, 'the run must have left the question pending').toBe(true);
    const r = await s.cli(['answer', sessionId, 'blue', '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    const out = parseJson<Record<string, unknown>>(r);
    expect(out).toMatchObject({ session_id: sessionId, workflow_id: `${sessionId}/turn-1`, terminated_by: 'final_answer', steps: 2 });
    expect(out.answer).toContain('blue');
    expect((out.usage as { total_tokens: number }).total_tokens).toBeGreaterThan(0);
  });

  it('answering again is a one-line error with a hint and exit 1', async () => {
    expect(started, 'the run must have left the question pending').toBe(true);
    const r = await s.cli(['answer', sessionId, 'red']);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.errLines, describeResult(r)).toHaveLength(2);
    expect(r.errLines[0]).toMatch(/^error: .*not waiting for an answer/);
    expect(r.errLines[1]).toMatch(/^hint: /);
    expect(stackLines(r.stderr)).toEqual([]);
  });
});

describe('`harness answer --no-wait`', () => {
  it('returns as soon as the answer is delivered and the turn then completes', async () => {
    const sessionId = newSessionId('cli-nowait');
    const script = writeScript(s.dir, colourScript('teal'));
    const run = await s.cli(['run', '--model', `scripted:${script}`, 'pick a colour', '--json', '--session', sessionId]);
    expect(run.code, describeResult(run)).toBe(3);

    const r = await s.cli(['answer', sessionId, 'teal', '--no-wait', '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r)).toMatchObject({ session_id: sessionId, workflow_id: `${sessionId}/turn-1` });
    expect(stackLines(r.stderr)).toEqual([]);

    const outcome = await waitForTurn(s.h.client, `${sessionId}/turn-1`, { pollMs: 100 });
    expect(outcome.kind).toBe('done');
    if (outcome.kind !== 'done') return;
    expect(outcome.result.terminated_by).toBe('final_answer');
    expect(outcome.result.answer).toBe('You chose teal. HARNESS_OK');
  });
});
