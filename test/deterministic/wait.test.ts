import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_WAIT_MS, waitPlan, waitResult } from '../../deterministic/wait';

const NOW = Date.parse('2026-06-01T12:00:00Z');

describe('waitPlan', () => {
  it('takes seconds from now, or a time with its zone', () => {
    expect(waitPlan({ seconds: 1.5, reason: ' the build ' }, NOW, DEFAULT_MAX_WAIT_MS)).toEqual({ untilMs: NOW + 1500, ms: 1500, reason: 'the build' });
    // 14:00 at +02:00 is now: not in the future.
    expect(waitPlan({ until: '2026-06-01T14:00:00+02:00', reason: 'x' }, NOW, DEFAULT_MAX_WAIT_MS)).toMatchObject({ error: { error_type: 'INVALID_ARGUMENTS' } });
    expect(waitPlan({ until: '2026-06-01T13:00:00Z', reason: 'x' }, NOW, DEFAULT_MAX_WAIT_MS)).toEqual({ untilMs: NOW + 3_600_000, ms: 3_600_000, reason: 'x' });
  });

  it('refuses a wait past the bound rather than clamping it, naming the bound', () => {
    const out = waitPlan({ seconds: 86_401, reason: 'x' }, NOW, DEFAULT_MAX_WAIT_MS);
    expect(out).toMatchObject({ error: { ok: false, error_type: 'INVALID_ARGUMENTS' } });
    expect('error' in out && out.error.message).toContain('at most 86400 seconds');
    expect(waitPlan({ seconds: 86_400, reason: 'x' }, NOW, DEFAULT_MAX_WAIT_MS)).not.toHaveProperty('error');
  });

  it('refuses non-numbers, a time without zone, and a reason that is too long', () => {
    for (const args of [{ seconds: '10', reason: 'x' }, { seconds: Number.NaN, reason: 'x' }, { seconds: -1, reason: 'x' }, { until: '2026-06-01 13:00', reason: 'x' }, { until: 5, reason: 'x' }, { seconds: 5, reason: 'y'.repeat(501) }]) {
      expect(waitPlan(args, NOW, DEFAULT_MAX_WAIT_MS), JSON.stringify(args).slice(0, 60)).toMatchObject({ error: { error_type: 'INVALID_ARGUMENTS' } });
    }
  });
});

describe('waitResult', () => {
  it('says whether it slept the whole time or was woken, by whom and why', () => {
    const plan = { untilMs: NOW + 60_000, ms: 60_000, reason: 'x' };
    expect(waitResult(plan, NOW, { nowMs: NOW + 60_000 })).toEqual({ ok: true, result: { woke: 'on_time', slept_seconds: 60, now: '2026-06-01T12:01:00.000Z' } });
    expect(waitResult(plan, NOW, { nowMs: NOW + 10_000, woken: { by: 'ana', reason: 'done' } })).toEqual({
      ok: true,
      result: { woke: 'early', slept_seconds: 10, now: '2026-06-01T12:00:10.000Z', planned_until: '2026-06-01T12:01:00.000Z', woken_by: 'ana', wake_reason: 'done' },
    });
  });
});
