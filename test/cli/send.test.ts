/**
 * `harness send` from another process while a turn runs: the message is queued for the running
 * turn (status counts it) and its model reads it at the next step; --interrupt and --reject
 * together, --reject while a turn runs and an unknown session are one-line errors with a hint.
 */
import { describe, expect, it } from 'vitest';
import { answerQuestion, sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { newSessionId, scriptedConfig } from '../support/harness';
import { describeResult, parseJson, stackLines } from '../support/cli';
import { useCliHarness } from '../support/cli-harness';

const s = useCliHarness('harness-cli-send-');

describe('harness send', () => {
  it('queues a message for the running turn; status counts it and the model reads it at the next step', async () => {
    const sessionId = newSessionId('cli-send');
    const config = scriptedConfig({
      steps: [
        { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which branch?' } }] },
        { expect: { messages_contain: 'and tag the release' }, content: 'Deployed main and tagged it. DONE' },
      ],
    });
    s.h.declareUsed(config);
    const sent = await sendMessage(s.h.client, { taskQueue: s.h.taskQueue, sessionId, config, text: 'deploy' });
    await expect.poll(async () => (await sessionState(s.h.client, sessionId)).status, { timeout: 30_000, interval: 100 }).toBe('waiting_for_user');
    const r = await s.cli(['send', sessionId, 'and tag the release']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toContain(`queued for ${sent.turnId}: the model reads it at its next step`);
    const status = await s.cli(['status', sessionId]);
    expect(status.stdout).toContain('1 message(s) queued for the running turn');
    expect(parseJson<{ queued: number }>(await s.cli(['status', sessionId, '--json'])).queued).toBe(1);
    await answerQuestion(s.h.client, sessionId, 'main');
    const out = await waitForTurn(s.h.client, sent.turnId, { timeoutMs: 60_000 });
    expect(out.kind === 'done' && out.result.answer).toBe('Deployed main and tagged it. DONE');
  });

  it('refuses --reject while a turn runs, and bad combinations, in one line with a hint', async () => {
    const sessionId = newSessionId('cli-send');
    const config = scriptedConfig({ steps: [{ tool_calls: [{ name: 'ask_user', arguments: { question: 'Which branch?' } }] }, { content: 'never' }] });
    s.h.declareUsed(config);
    await sendMessage(s.h.client, { taskQueue: s.h.taskQueue, sessionId, config, text: 'deploy' });
    await expect.poll(async () => (await sessionState(s.h.client, sessionId)).status, { timeout: 30_000, interval: 100 }).toBe('waiting_for_user');
    const rejected = await s.cli(['send', sessionId, 'hurry', '--reject']);
    expect(rejected.code, describeResult(rejected)).toBe(1);
    expect(rejected.stderr).toMatch(/a turn is already running \(.*\/turn-1\)/);
    expect(stackLines(rejected.stderr)).toEqual([]);
    const both = await s.cli(['send', sessionId, 'hurry', '--reject', '--interrupt']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--interrupt and --reject cannot be combined/);
    expect(both.stderr.trim().split('\n').length).toBeLessThanOrEqual(2);
    const unknown = await s.cli(['send', 'no-such-session', 'hello']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/no-such-session/);
    expect(stackLines(unknown.stderr)).toEqual([]);
    await s.h.client.workflow.getHandle(sessionId).terminate('test cleanup');
  });

  it('--help explains queue, --interrupt and --reject', async () => {
    const r = await s.cli(['send', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/queued/);
    expect(r.stdout).toContain('--interrupt');
    expect(r.stdout).toContain('--reject');
  });
});
