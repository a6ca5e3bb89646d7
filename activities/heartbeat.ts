/** Heartbeats on a timer while an activity works. */
import { Context } from '@temporalio/activity';

/**
 * Runs `fn` while heartbeating a third of the heartbeat timeout apart, on a timer from the start,
 * when the activity has a heartbeat timeout: Temporal then notices a worker killed meanwhile
 * within seconds and retries elsewhere, and work slowed by a loaded machine or server does not
 * look like a lost worker.
 */
export async function withHeartbeat<T>(fn: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const every = ctx.info.heartbeatTimeoutMs;
  if (ctx.info.isLocal || !every) return fn();
  const beat = setInterval(() => ctx.heartbeat(), Math.max(200, every / 3));
  try {
    return await fn();
  } finally {
    clearInterval(beat);
  }
}
