/**
 * `harness run --session ID` on an existing session: the session's configuration was fixed
 * when it started, so the next turn must not need the model named again.
 */
import { describe, expect, it } from 'vitest';
import { newSessionId } from '../support/harness';
import { describeResult, parseJson, writeScript } from '../support/cli';
import { useCliHarness } from '../support/cli-harness';

const s = useCliHarness('harness-cli-continue-');

describe('continuing a session from the CLI', () => {
  it('`run --session ID` without --model continues with the model the session started with', async () => {
    const sessionId = newSessionId('cli-continue');
    const script = writeScript(s.dir, {
      steps: [
        { content: 'First turn done.' },
        { expect: { last_message_contains: 'second task' }, content: 'Second turn done. HARNESS_OK' },
      ],
    });
    const first = await s.cli(['run', '--model', `scripted:${script}`, 'first task', '--json', '--session', sessionId]);
    expect(first.code, describeResult(first)).toBe(0);
    expect(parseJson(first)).toMatchObject({ workflow_id: `${sessionId}/turn-1`, answer: 'First turn done.' });

    const second = await s.cli(['run', 'second task', '--json', '--session', sessionId]);
    expect(second.code, describeResult(second)).toBe(0);
    expect(parseJson(second)).toMatchObject({
      session_id: sessionId,
      workflow_id: `${sessionId}/turn-2`,
      terminated_by: 'final_answer',
      answer: 'Second turn done. HARNESS_OK',
    });
  });
});
