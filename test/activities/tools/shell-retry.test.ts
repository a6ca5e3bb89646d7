// runShell's retries of an unavailable sandbox, with a scripted sandbox (no Docker needed).
import { describe, expect, it } from 'vitest';
import { SandboxError } from '../../../activities/sandbox/docker-errors';
import type { ExecOptions, Sandbox } from '../../../activities/sandbox/sandbox';
import { runShell, SANDBOX_ATTEMPTS } from '../../../activities/tools/shell';

/** A sandbox whose exec always throws `err`, counting the calls. */
function failing(err: Error): Sandbox & { calls: ExecOptions[] } {
  const calls: ExecOptions[] = [];
  return {
    calls,
    exec: async (_cmd, opts) => {
      calls.push(opts);
      throw err;
    },
    ensure: async () => undefined,
    remove: async () => undefined,
  };
}

describe('runShell retries', () => {
  it('retries a sandbox failure from before the command started, then reports SANDBOX_UNAVAILABLE', async () => {
    const sb = failing(new SandboxError('Docker Engine is not reachable'));
    const r = await runShell(sb, { command: 'true' }, { callKey: 't/c1' });
    expect(sb.calls).toHaveLength(SANDBOX_ATTEMPTS);
    expect(sb.calls.every((o) => o.key === 't/c1')).toBe(true);
    expect(r).toMatchObject({ ok: false, error_type: 'SANDBOX_UNAVAILABLE', recoverable: true });
    expect(r.message).toContain(`after ${SANDBOX_ATTEMPTS} attempts`);
  });

  it('never retries a sandbox failure from after the command started, and says it may have run', async () => {
    const sb = failing(new SandboxError('Docker stopped answering while the command ran', { started: true }));
    const r = await runShell(sb, { command: 'echo A >> log.txt' }, { callKey: 't/c1' });
    expect(sb.calls).toHaveLength(1);
    expect(r).toMatchObject({ ok: false, error_type: 'SANDBOX_UNAVAILABLE', recoverable: true });
    expect(r.message).toMatch(/may have run/);
    expect(r.suggestion).toMatch(/check the workspace/);
  });
});
