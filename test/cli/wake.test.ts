/**
 * `harness wake` from another process: `status` shows a session whose turn sleeps in a `wait`
 * call ("sleeping until … (reason)"), `wake --reason` ends the wait and follows the turn to its
 * answer, `trace` shows the wait; a session that is not sleeping, an unknown one and an empty
 * reason are one-line errors with a hint.
 */
import { describe, expect, it } from 'vitest';
import { sendMessage } from '../../client/session-client';
import { newSessionId, scriptedConfig } from '../support/harness';
import { describeResult, parseJson, stackLines } from '../support/cli';
import { useCliHarness } from '../support/cli-harness';

const s = useCliHarness('harness-cli-wake-');

describe('harness wake', () => {
  const sessionId = newSessionId('cli-wake');
  let sleeping = false;

  it('`status` shows the session sleeping until a time, with the reason', async () => {
    const config = scriptedConfig({
      steps: [
        { tool_calls: [{ name: 'wait', arguments: { seconds: 3600, reason: 'the nightly job' } }] },
        { expect: { last_message_contains: 'job finished early' }, content: 'The nightly job is done. DONE' },
      ],
    });
    s.h.declareUsed(config);
    await sendMessage(s.h.client, { taskQueue: s.h.taskQueue, sessionId, config, text: 'check on the nightly job in an hour' });
    await expect
      .poll(
        async () => {
          const r = await s.cli(['status', sessionId, '--json']);
          return r.code === 0 ? Boolean(parseJson<{ sleeping?: unknown }>(r).sleeping) : describeResult(r);
        },
        { timeout: 30_000, interval: 250 },
      )
      .toBe(true);
    const json = parseJson<{ status: string; sleeping: { until: string; reason: string; call_id: string } }>(await s.cli(['status', sessionId, '--json']));
    expect(json).toMatchObject({ status: 'running', sleeping: { reason: 'the nightly job', call_id: 't1-s1-c0' } });
    const r = await s.cli(['status', sessionId]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toContain(`sleeping until ${json.sleeping.until} (the nightly job); wake it with \`harness wake ${sessionId}\``);
    const list = await s.cli(['sessions']);
    expect(list.stdout.split('\n').find((l) => l.startsWith(sessionId))).toContain(`sleeping until ${json.sleeping.until}`);
    sleeping = true;
  });

  it('`wake --reason` ends the wait and follows the turn to its answer', async () => {
    expect(sleeping, 'the session must be sleeping').toBe(true);
    const r = await s.cli(['wake', sessionId, '--reason', 'the job finished early']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout + r.stderr).toContain(`woke ${sessionId}/turn-1: its wait t1-s1-c0 would have slept until`);
    expect(r.stdout).toContain('The nightly job is done. DONE');
    expect(stackLines(r.stderr)).toEqual([]);

    const trace = await s.cli(['trace', `${sessionId}/turn-1`]);
    expect(trace.code, describeResult(trace)).toBe(0);
    expect(trace.stdout).toMatch(/wait until .*\(the nightly job\) → woken by .*: the job finished early/);
  });

  it('waking it again, or an unknown session, is a one-line error with a hint (exit 1)', async () => {
    expect(sleeping, 'the session must have slept').toBe(true);
    const again = await s.cli(['wake', sessionId]);
    expect(again.code, describeResult(again)).toBe(1);
    expect(again.errLines, describeResult(again)).toHaveLength(2);
    expect(again.errLines[0]).toBe(`error: session ${sessionId} is not sleeping (status: idle)`);
    expect(again.errLines[1]).toMatch(/^hint: only a turn waiting in a `wait` call can be woken/);

    const unknown = await s.cli(['wake', 'no-such-session-cli-wake']);
    expect(unknown.code, describeResult(unknown)).toBe(1);
    expect(unknown.errLines[0]).toBe('error: no session named no-such-session-cli-wake');
    expect(stackLines(unknown.stderr)).toEqual([]);
  });

  it('an empty --reason is a usage error (exit 2)', async () => {
    const r = await s.cli(['wake', sessionId, '--reason', '  ']);
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.errLines[0]).toBe('error: --reason must not be empty');
  });
});
