/** Heartbeats on a timer while an activity works. */
import { Context } from '@temporalio/activity';

/**
 * Runs `fn` while heartbeating a third of the heartbeat timeout apart, on a timer from the start
 * (the first beat a third of the timeout in), when the activity has a heartbeat timeout: Temporal
 * then notices a worker killed meanwhile within seconds and retries elsewhere, and work slowed by
 * a loaded machine or server does not look like a lost worker. `beat` sends one heartbeat (by
 * default without details; an activity whose retry reads its progress back sends that).
 */
export async function withHeartbeat<T>(fn: () => Promise<T>, beat?: () => void): Promise<T> {
  const ctx = Context.current();
  const every = ctx.info.heartbeatTimeoutMs;
  if (ctx.info.isLocal || !every) return fn();
  const timer = setInterval(beat ?? (() => ctx.heartbeat()), Math.max(100, every / 3));
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}
