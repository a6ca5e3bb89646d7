/**
 * withHeartbeat is the one timer that heartbeats while an activity works (tools, awaitTurnRun,
 * MCP discovery, the model call with its progress): a third of the heartbeat timeout apart, the
 * first a third in, none when there is no heartbeat timeout or the activity is local.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MockActivityEnvironment } from '@temporalio/testing';
import { withHeartbeat } from '../../activities/heartbeat';

describe('withHeartbeat', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const beatsWhile = async (env: MockActivityEnvironment, advanceMs: number, beat?: (send: (details?: unknown) => void) => () => void) => {
    const seen: unknown[] = [];
    env.on('heartbeat', (d: unknown) => seen.push(d));
    const out = await env.run(async () => {
      const { Context } = await import('@temporalio/activity');
      const ctx = Context.current();
      const send = beat?.((d) => ctx.heartbeat(d));
      return withHeartbeat(async () => {
        await vi.advanceTimersByTimeAsync(advanceMs);
        return 'done';
      }, send);
    });
    return { out, seen };
  };

  it('beats a third of the heartbeat timeout apart, the first a third in, and stops with the work', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 3_000 });
    const { out, seen } = await beatsWhile(env, 3_500);
    expect(out).toBe('done');
    expect(seen).toEqual([undefined, undefined, undefined]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(seen).toHaveLength(3);
  });

  it('sends what the caller beats with (a model call its progress)', async () => {
    const env = new MockActivityEnvironment({ heartbeatTimeoutMs: 3_000 });
    const progress = { timeouts: 1 };
    const { seen } = await beatsWhile(env, 2_500, (send) => () => send(progress));
    expect(seen).toEqual([progress, progress]);
  });

  it('does not beat without a heartbeat timeout, nor in a local activity', async () => {
    expect((await beatsWhile(new MockActivityEnvironment({ heartbeatTimeoutMs: undefined }), 60_000)).seen).toEqual([]);
    expect((await beatsWhile(new MockActivityEnvironment({ heartbeatTimeoutMs: 3_000, isLocal: true }), 60_000)).seen).toEqual([]);
  });
});
