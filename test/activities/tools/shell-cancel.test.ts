/**
 * run_shell cancelled while its command runs, against the real Docker Engine: every process of
 * the command is killed in the container (not only the host's wait on it), the call ends with
 * the cancellation's reason, and a later attempt of the same call reads that it was cancelled
 * rather than running it again.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandbox } from '../../../activities/sandbox/docker-sandbox';
import { removeOrphans } from '../../../activities/sandbox/containers';
import { runShell } from '../../../activities/tools/shell';

const docker = new Docker();
let home: string;

beforeAll(() => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shell-cancel-')));
});
afterAll(async () => {
  await removeOrphans(docker, [], { home });
  fs.rmSync(home, { recursive: true, force: true });
});

/** What runs in the sandbox, asked through a command of its own. */
async function ps(sb: DockerSandbox): Promise<string> {
  return (await sb.exec('ps -eo stat=,args= | grep -v "^ *Z"', { timeoutMs: 20_000 })).stdout;
}

describe.each([
  ['a shell session', true],
  ['a Docker exec per command', false],
])('run_shell cancelled through %s', (_how, sessions) => {
  it('kills every process of the command, ends with the reason, and a retry of the call does not run it again', async () => {
    const sessionId = `cancel-${randomUUID().slice(0, 8)}`;
    const sb = new DockerSandbox({ home, sessionId, sessions });
    const workspace = path.join(home, 'workspaces', sessionId);
    fs.mkdirSync(workspace, { recursive: true });
    const controller = new AbortController();
    const key = `${sessionId}/turn-1/c1`;
    // A background child that left the process group, and the command's own sleep.
    const command = 'setsid sleep 311 & sleep 312; echo late > late.txt';
    const call = runShell(sb, { command, timeout_ms: 600_000 }, { callKey: key, workspace, cancel: controller.signal });
    const settled = call.then(
      () => 'resolved',
      (err: unknown) => err,
    );
    await expect.poll(() => ps(sb), { timeout: 60_000, interval: 200 }).toMatch(/sleep 312/);

    const reason = new Error('the turn was cancelled');
    controller.abort(reason);
    expect(await settled).toBe(reason);
    expect(await ps(sb)).not.toMatch(/sleep 31[12]/);

    // The call's record says it was cancelled: another attempt reads that instead of running it.
    const again = await runShell(sb, { command, timeout_ms: 600_000 }, { callKey: key, workspace });
    expect(again).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR', message: 'the command was cancelled and killed before it finished' });
    expect(await ps(sb)).not.toMatch(/sleep 31[12]/);
    expect(fs.existsSync(path.join(workspace, 'late.txt'))).toBe(false);
  });
});

it('a call cancelled before it starts runs nothing', async () => {
  const sessionId = `cancel-${randomUUID().slice(0, 8)}`;
  const sb = new DockerSandbox({ home, sessionId });
  const workspace = path.join(home, 'workspaces', sessionId);
  fs.mkdirSync(workspace, { recursive: true });
  const controller = new AbortController();
  const reason = new Error('cancelled first');
  controller.abort(reason);
  await expect(runShell(sb, { command: 'echo ran > ran.txt' }, { workspace, cancel: controller.signal })).rejects.toBe(reason);
  expect(fs.existsSync(path.join(workspace, 'ran.txt'))).toBe(false);
});
