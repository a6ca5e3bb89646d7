// run_shell through the executor against the real Docker Engine: no skips.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandbox } from '../../../activities/sandbox/docker-sandbox';
import { removeOrphans } from '../../../activities/sandbox/containers';
import { type Sandbox } from '../../../activities/sandbox/sandbox';
import { createToolExecutor, type ToolExecutor } from '../../../activities/tools/executor';
import { runShell } from '../../../activities/tools/shell';

let home: string;
let ex: ToolExecutor;
const sessionId = `sh-${randomUUID().slice(0, 8)}`;

beforeAll(() => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shell-test-')));
  // One sandbox object per session, as a worker would keep them.
  const cache = new Map<string, Sandbox>();
  const sandboxes = (id: string) => cache.get(id) ?? cache.set(id, new DockerSandbox({ home, sessionId: id })).get(id)!;
  ex = createToolExecutor({ home, sandboxes });
});

afterAll(async () => {
  await removeOrphans(new Docker(), [], { home });
  fs.rmSync(home, { recursive: true, force: true });
});

const shell = (args: Record<string, unknown>, e: ToolExecutor = ex) => e.execute({ sessionId, name: 'run_shell', args });

describe('run_shell', () => {
  it('returns exit code, stdout, stderr, truncated and duration of a successful command', async () => {
    const r = await shell({ command: 'echo out; echo err >&2' });
    expect(r).toMatchObject({ ok: true, result: { exit_code: 0, stdout: 'out\n', stderr: 'err\n', truncated: false } });
    expect((r.result as { duration_ms: number }).duration_ms).toBeGreaterThanOrEqual(0);
  });

  it('turns a non-zero exit into a recoverable EXECUTION_ERROR that summarises stderr and keeps the output', async () => {
    const r = await shell({ command: 'echo partial; ls /nope' });
    expect(r).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR', recoverable: true });
    expect(r.message).toMatch(/exited with code 2: .*No such file or directory/);
    expect(r.result).toMatchObject({ exit_code: 2, stdout: 'partial\n' });
  });

  it('kills a command that outlives timeout_ms: recoverable COMMAND_TIMEOUT with a suggestion', async () => {
    const r = await shell({ command: 'echo started; sleep 1000', timeout_ms: 1000 });
    expect(r).toMatchObject({ ok: false, error_type: 'COMMAND_TIMEOUT', recoverable: true, result: { stdout: 'started\n' } });
    expect(r.suggestion).toContain('timeout_ms');
  });

  it('caps the output of `yes` and states how many bytes were dropped', async () => {
    const r = await shell({ command: 'yes | head -c 5000000' });
    expect(r).toMatchObject({ ok: true, result: { truncated: true, dropped_bytes: 5_000_000 - 20_000 } });
    expect((r.result as { stdout: string }).stdout).toContain('bytes dropped');
  });

  it('rejects an empty command and a timeout above 600000 ms as INVALID_ARGUMENTS', async () => {
    expect(await shell({ command: '' })).toMatchObject({ error_type: 'INVALID_ARGUMENTS' });
    expect(await shell({ command: 'true', timeout_ms: 600_001 })).toMatchObject({ error_type: 'INVALID_ARGUMENTS' });
  });

  it('shares the workspace with the file tools, including folders write_file created', async () => {
    await ex.execute({ sessionId, name: 'write_file', args: { path: 'src/app.txt', content: 'v1' } });
    const r = await shell({ command: 'cat src/app.txt && echo v2 >> src/app.txt && echo new > src/made-inside.txt' });
    expect(r).toMatchObject({ ok: true, result: { stdout: 'v1' } });
    expect(await ex.execute({ sessionId, name: 'read_file', args: { path: 'src/app.txt' } })).toMatchObject({ result: { content: 'v1v2\n' } });
    expect(await ex.execute({ sessionId, name: 'read_file', args: { path: 'src/made-inside.txt' } })).toMatchObject({ result: { content: 'new\n' } });
  });

  it('refuses, in the host file tools, a symlink to /etc made inside the container', async () => {
    expect(await shell({ command: 'ln -s /etc /workspace/etc-link && ls etc-link/passwd' })).toMatchObject({ ok: true });
    const r = await ex.execute({ sessionId, name: 'read_file', args: { path: 'etc-link/passwd' } });
    expect(r).toMatchObject({ ok: false, error_type: 'PATH_OUTSIDE_WORKSPACE' });
    expect(await ex.execute({ sessionId, name: 'write_file', args: { path: 'etc-link/evil', content: 'x' } })).toMatchObject({
      error_type: 'PATH_OUTSIDE_WORKSPACE',
    });
  });

  it('is a recoverable SANDBOX_UNAVAILABLE when Docker is unreachable, and the session keeps working', async () => {
    const down = createToolExecutor({
      home,
      sandboxes: (id) => new DockerSandbox({ home, sessionId: id, docker: new Docker({ socketPath: '/nonexistent/docker.sock' }) }),
    });
    const r = await shell({ command: 'true' }, down);
    expect(r).toMatchObject({ ok: false, error_type: 'SANDBOX_UNAVAILABLE', recoverable: true });
    expect(r.message).toContain('Docker Engine is not reachable');
    expect(await down.execute({ sessionId, name: 'list_files', args: {} })).toMatchObject({ ok: true });
  });

  it('runs a call named by turn and call id once: the same ids again return the first result without running it', async () => {
    const call = (callId: string) =>
      ex.execute({ sessionId, name: 'run_shell', args: { command: 'echo x >> calls.txt; wc -l < calls.txt' }, turnId: `${sessionId}/turn-1`, callId });
    const first = await call('c1');
    expect(first).toMatchObject({ ok: true, result: { stdout: '1\n' } });
    expect(await call('c1')).toEqual(first);
    expect(await call('c2')).toMatchObject({ ok: true, result: { stdout: '2\n' } });
  });

  it('explains a SIGXFSZ kill by the file-size limit in the message', async () => {
    const s = new DockerSandbox({ home, sessionId: `sh-fsize-${randomUUID().slice(0, 8)}`, limits: { fileSizeBytes: 1 << 20 } });
    const r = await runShell(s, { command: 'head -c 3000000 /dev/zero > big.bin' });
    expect(r).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR', result: { exit_code: 153 } });
    expect(r.message).toContain('killed by SIGXFSZ: a file reached the sandbox file-size limit of 1 MiB');
  });

  it('reports WORKSPACE_FULL with the command result while the workspace is over budget, lets rm run, and clears once it is back under', async () => {
    const small = createToolExecutor({ home, sandboxes: (id) => new DockerSandbox({ home, sessionId: id }), workspaceMaxBytes: 1 << 20 });
    const id = `sh-full-${randomUUID().slice(0, 8)}`;
    const run = (command: string) => small.execute({ sessionId: id, name: 'run_shell', args: { command } });
    const over = await run('head -c 2000000 /dev/urandom > big.bin && echo written');
    expect(over).toMatchObject({ ok: false, error_type: 'WORKSPACE_FULL', recoverable: true, result: { exit_code: 0, stdout: 'written\n' } });
    expect(over.message).toMatch(/over its budget of 1 MiB; the command itself succeeded/);
    expect(over.suggestion).toMatch(/delete files/);
    expect(await run('ls')).toMatchObject({ ok: false, error_type: 'WORKSPACE_FULL', result: { stdout: 'big.bin\n' } });
    expect(await run('rm big.bin && echo gone')).toMatchObject({ ok: true, result: { stdout: 'gone\n' } });
    expect(await run('echo fine')).toMatchObject({ ok: true });
  });

  it('stops a command that keeps growing the workspace past its budget', async () => {
    const small = createToolExecutor({ home, sandboxes: (id) => new DockerSandbox({ home, sessionId: id }), workspaceMaxBytes: 1 << 20 });
    const id = `sh-grow-${randomUUID().slice(0, 8)}`;
    const command = 'for i in $(seq 60); do head -c 300000 /dev/urandom > f$i; sleep 0.25; done; echo finished';
    const r = await small.execute({ sessionId: id, name: 'run_shell', args: { command } });
    expect(r).toMatchObject({ ok: false, error_type: 'WORKSPACE_FULL' });
    expect(r.message).toMatch(/stopped because it made the workspace grow past its budget/);
    expect((r.result as { stdout: string }).stdout).not.toContain('finished');
    expect(fs.readdirSync(path.join(home, 'workspaces', id)).length).toBeLessThan(60);
  });

  it('is SANDBOX_UNAVAILABLE when the worker has no sandbox at all', async () => {
    const none = createToolExecutor({ home });
    expect(await shell({ command: 'true' }, none)).toMatchObject({ ok: false, error_type: 'SANDBOX_UNAVAILABLE', recoverable: true });
  });
});
