// Against the real Docker Engine: no skips. Without Docker these tests fail (CI installs it).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandbox } from '../../../activities/sandbox/docker-sandbox';
import { containerName, DEFAULT_LIMITS, EXEC_MOUNT, LABELS, removeOrphans } from '../../../activities/sandbox/containers';
import { SandboxError } from '../../../activities/sandbox/docker-errors';
import type { ExecResult } from '../../../activities/sandbox/exec-record';
import { containerSpec } from '../../../activities/sandbox/containers';
import { ExecRecords, execsDir } from '../../../activities/sandbox/exec-record';
import { WRAPPER, WRAPPER_SHELL } from '../../../activities/sandbox/exec-wrapper';

const docker = new Docker();
let home: string;
let sb: DockerSandbox;
const sbId = `sbt-shared-${randomUUID().slice(0, 8)}`;

const sid = () => `sbt-${randomUUID().slice(0, 8)}`;
const ws = (sessionId: string) => path.join(home, 'workspaces', sessionId);
const run = (s: DockerSandbox, cmd: string, timeoutMs = 20_000, maxOutputBytes?: number): Promise<ExecResult> =>
  s.exec(cmd, { timeoutMs, ...(maxOutputBytes ? { maxOutputBytes } : {}) });

beforeAll(async () => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandbox-test-')));
  sb = new DockerSandbox({ home, sessionId: sbId });
  await sb.ensure();
});

afterAll(async () => {
  await removeOrphans(docker, [], { home });
  fs.rmSync(home, { recursive: true, force: true });
});

describe('DockerSandbox', () => {
  it('shows files written on the host inside the container, and files written inside on the host', async () => {
    const id = sid();
    const s = new DockerSandbox({ home, sessionId: id });
    fs.mkdirSync(ws(id), { recursive: true });
    fs.writeFileSync(path.join(ws(id), 'from-host.txt'), 'hello from host');
    const r = await run(s, 'cat from-host.txt && echo "hello from container" > from-container.txt');
    expect(r).toMatchObject({ exitCode: 0, stdout: 'hello from host', timedOut: false });
    expect(fs.readFileSync(path.join(ws(id), 'from-container.txt'), 'utf8')).toBe('hello from container\n');
  });

  it('reuses the same container for a second DockerSandbox of the same session, files included', async () => {
    const id = sid();
    await run(new DockerSandbox({ home, sessionId: id }), 'echo kept > kept.txt');
    const first = (await docker.getContainer(containerName(id)).inspect()).Id;
    const again = new DockerSandbox({ home, sessionId: id });
    expect((await run(again, 'cat kept.txt')).stdout).toBe('kept\n');
    expect((await docker.getContainer(containerName(id)).inspect()).Id).toBe(first);
  });

  it('recreates the container when it was removed behind its back', async () => {
    const id = sid();
    const s = new DockerSandbox({ home, sessionId: id });
    await run(s, 'echo one > one.txt');
    await docker.getContainer(containerName(id)).remove({ force: true });
    expect(await run(s, 'cat one.txt')).toMatchObject({ exitCode: 0, stdout: 'one\n' });
  });

  it('has no network: only the loopback interface, and outbound connections fail', async () => {
    expect((await run(sb, 'ls /sys/class/net')).stdout.trim()).toBe('lo');
    const py = 'import socket; s = socket.socket(); s.settimeout(3); s.connect(("1.1.1.1", 53))';
    const r = await run(sb, `python3 -c '${py}'`);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/unreachable|OSError/i);
  });

  it('has a read-only root filesystem and a writable but non-executable /tmp', async () => {
    const ro = await run(sb, 'touch /etc/x');
    expect(ro.exitCode).not.toBe(0);
    expect(ro.stderr).toContain('Read-only file system');
    expect(await run(sb, 'echo scratch > /tmp/x && cat /tmp/x')).toMatchObject({ exitCode: 0, stdout: 'scratch\n' });
    expect((await run(sb, 'cp /bin/true /tmp/t && /tmp/t')).exitCode).toBe(126);
  });

  it('runs without any capability and with no-new-privileges', async () => {
    const r = await run(sb, 'grep -E "^(CapEff|CapPrm|CapBnd|NoNewPrivs)" /proc/self/status');
    expect(r.stdout).toMatch(/CapEff:\s+0000000000000000/);
    expect(r.stdout).toMatch(/CapPrm:\s+0000000000000000/);
    expect(r.stdout).toMatch(/CapBnd:\s+0000000000000000/);
    expect(r.stdout).toMatch(/NoNewPrivs:\s+1/);
  });

  it('runs as the non-root user 1000', async () => {
    expect((await run(sb, 'id -u; id -g')).stdout).toBe('1000\n1000\n');
  });

  it('stops a fork bomb at the pids limit and stays usable afterwards', async () => {
    const py = [
      'import os, time',
      'kids, err = [], "none"',
      'for i in range(1000):',
      '    try:',
      '        pid = os.fork()',
      '    except OSError as e:',
      '        err = type(e).__name__',
      '        break',
      '    if pid == 0:',
      '        time.sleep(60)',
      '        os._exit(0)',
      '    kids.append(pid)',
      'print(len(kids), err)',
      'for k in kids: os.kill(k, 9)',
      'for k in kids: os.waitpid(k, 0)',
    ].join('\n');
    fs.writeFileSync(path.join(ws(sbId), 'forks.py'), py);
    const r = await run(sb, 'python3 forks.py', 30_000);
    const [count, err] = r.stdout.trim().split(' ');
    expect(Number(count)).toBeLessThan(128);
    expect(err).toBe('BlockingIOError');
    expect(await run(sb, 'echo alive')).toMatchObject({ exitCode: 0, stdout: 'alive\n' });
  });

  it('kills a memory bomb at the memory limit with exit code 137', async () => {
    const r = await run(sb, `python3 -c 'a = [bytearray(b"x" * (64 << 20)) for _ in range(32)]; print("survived")'`, 30_000);
    expect(r.exitCode).toBe(137);
    expect(r.stdout).not.toContain('survived');
    expect(r.timedOut).toBe(false);
    expect((await run(sb, 'echo alive')).stdout).toBe('alive\n');
  });

  it('kills `sleep 1000` at the timeout and answers long before it would end', async () => {
    const r = await run(sb, 'sleep 1000', 1_000);
    expect(r.timedOut).toBe(true);
    expect(r.exitCode).toBe(137);
    expect((await run(sb, 'ps -eo args')).stdout).not.toContain('sleep 1000');
  });

  it('also kills a process that left the process group (setsid) holding the output pipe', async () => {
    const r = await run(sb, 'setsid sleep 1001 & sleep 1002', 1_000);
    expect(r.timedOut).toBe(true);
    expect((await run(sb, 'ps -eo args')).stdout).not.toMatch(/sleep 100[12]/);
  });

  it('caps the output of `yes`, keeping head and tail and stating the dropped bytes', async () => {
    const r = await run(sb, 'yes | head -c 1000000', 20_000, 1_000);
    expect(r.truncated).toBe(true);
    expect(r.droppedBytes).toBe(999_000);
    expect(r.stdout).toContain('[... 999000 bytes dropped ...]');
    expect(r.stdout.startsWith('y\ny\n')).toBe(true);
    expect(r.stdout.endsWith('y\ny\n')).toBe(true);
    expect(r.stdout.length).toBeLessThan(1_100);
  });

  it('kills the processes a command leaves running in the background when it ends', async () => {
    const r = await run(sb, 'sleep 301 >/dev/null 2>&1 & setsid sleep 302 >/dev/null 2>&1 & echo started');
    expect(r).toMatchObject({ exitCode: 0, stdout: 'started\n', timedOut: false });
    expect((await run(sb, 'ps -eo args')).stdout).not.toMatch(/sleep 30[12]/);
  });

  it('removes the scratch folder (TMPDIR) a command wrote into, with the image\'s loadable mkdir and rm', async () => {
    const r = await run(sb, 'echo "$TMPDIR"; mkdir -p "$TMPDIR/a/b" && echo x > "$TMPDIR/a/b/f" && ls "$TMPDIR/a/b"');
    expect(r).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/^\/tmp\/\.harness-exec-x?[0-9a-f]{32}\nf\n$/) });
    // Other tests of this file write into the same container's /tmp: look for this one's folder only.
    const scratch = r.stdout.split('\n')[0]!;
    expect((await run(sb, `[ -e ${scratch} ] && echo kept || echo gone`)).stdout).toBe('gone\n');
    // What the wrapper uses so that making and removing that folder starts no process.
    expect(await run(sb, 'enable -f /usr/lib/bash/mkdir mkdir && enable -f /usr/lib/bash/rm rm && type -t mkdir rm')).toMatchObject({ exitCode: 0, stdout: 'builtin\nbuiltin\n' });
  });

  it('passes none of bash\'s code or option variables on to the command, even when its exec was given them', async () => {
    const id = `x${randomUUID().replace(/-/g, '')}`;
    const records = new ExecRecords(execsDir(home, sbId), { uid: 1000, gid: 1000 });
    await records.prepareOutputDir(id);
    const hostile = ['SHELLOPTS=xtrace', 'BASHOPTS=extglob', 'BASH_ENV=/etc/passwd', 'ENV=/etc/passwd', 'IFS=x', 'CDPATH=/', 'GLOBIGNORE=*', 'POSIXLY_CORRECT=1'];
    const exec = await docker.getContainer(containerName(sbId)).exec({
      Cmd: [...WRAPPER_SHELL, WRAPPER, 'harness-exec', id, '20.000', 'env; echo "flags $-"; shopt extglob'],
      AttachStdout: true,
      AttachStderr: true,
      Env: [`HARNESS_WRAP=${id}`, ...hostile],
    });
    const stream = await exec.start({ hijack: true, stdin: false });
    stream.resume();
    await new Promise((resolve) => stream.once('end', resolve));
    expect(await records.status(id)).toMatchObject({ code: 1 });
    const { stdout, stderr } = await records.outputs(id, 1 << 16);
    for (const kv of hostile) expect(stdout.text()).not.toContain(`${kv.split('=')[0]}=`);
    expect(stdout.text()).toMatch(/^flags hBc$/m);
    expect(stderr.text()).toBe('');
  });

  it('kills a write past the file-size limit with SIGXFSZ (exit 153) and keeps the file at the limit', async () => {
    const id = sid();
    const s = new DockerSandbox({ home, sessionId: id, limits: { fileSizeBytes: 1 << 20 } });
    const r = await run(s, 'head -c 3000000 /dev/zero > big.bin');
    expect(r.exitCode).toBe(153);
    expect(fs.statSync(path.join(ws(id), 'big.bin')).size).toBe(1 << 20);
  });

  it('counts the captured output against the file-size limit too', async () => {
    const s = new DockerSandbox({ home, sessionId: sid(), limits: { fileSizeBytes: 1 << 20 } });
    const r = await run(s, 'yes | head -c 3000000', 20_000, 1_000);
    expect(r.exitCode).toBe(153);
    // 1 MiB reached the output file: 1,000 bytes kept (head and tail), the rest counted as dropped.
    expect(r.droppedBytes).toBe((1 << 20) - 1_000);
    expect(r.stdout).toContain(`[... ${(1 << 20) - 1_000} bytes dropped ...]`);
  });

  it('never follows a symbolic link the command put in place of its output file', async () => {
    const secret = path.join(home, 'host-secret.txt');
    fs.writeFileSync(secret, 'HOST-SECRET');
    const r = await run(sb, `echo shown; rm "${EXEC_MOUNT}/$HARNESS_EXEC/out"; ln -s ${secret} "${EXEC_MOUNT}/$HARNESS_EXEC/out"`);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toContain('HOST-SECRET');
  });

  it('keeps exec records outside the workspace and removes them with the container', async () => {
    const id = sid();
    const s = new DockerSandbox({ home, sessionId: id });
    await s.exec('true', { timeoutMs: 20_000, key: 'turn-1/call-1' });
    expect(fs.readdirSync(execsDir(home, id)).length).toBeGreaterThan(0);
    expect(fs.readdirSync(ws(id))).toEqual([]);
    await s.remove();
    expect(fs.existsSync(execsDir(home, id))).toBe(false);
  });

  it('recreates a container made without the exec-records mount', async () => {
    const id = sid();
    fs.mkdirSync(ws(id), { recursive: true });
    // A container as an older harness made it: same name and labels, no exec-records mount.
    const made = await docker.createContainer(containerSpec({ name: containerName(id), image: 'harness-sandbox:latest', user: '1000:1000', sessionId: id, home, workspace: ws(id), limits: DEFAULT_LIMITS }));
    await made.start();
    expect(await run(new DockerSandbox({ home, sessionId: id }), `ls -d ${EXEC_MOUNT}`)).toMatchObject({ exitCode: 0 });
    const info = await docker.getContainer(containerName(id)).inspect();
    expect(info.Id).not.toBe(made.id);
    expect(info.Config.Labels[LABELS.session]).toBe(id);
  });

  it('recreates a container made without the file-size limit', async () => {
    const id = sid();
    fs.mkdirSync(ws(id), { recursive: true });
    const spec = containerSpec({ name: containerName(id), image: 'harness-sandbox:latest', user: '1000:1000', sessionId: id, home, workspace: ws(id), limits: DEFAULT_LIMITS, execDir: execsDir(home, id) });
    delete spec.HostConfig!.Ulimits;
    fs.mkdirSync(execsDir(home, id), { recursive: true });
    const made = await docker.createContainer(spec);
    await made.start();
    const r = await run(new DockerSandbox({ home, sessionId: id }), 'grep "Max file size" /proc/self/limits');
    expect(r.stdout).toMatch(/Max file size\s+1073741824\s+1073741824/);
    expect((await docker.getContainer(containerName(id)).inspect()).Id).not.toBe(made.id);
  });

  it('forgets exec records older than a day as it runs commands', async () => {
    const id = sid();
    const dir = execsDir(home, id);
    fs.mkdirSync(dir, { recursive: true });
    const stale = path.join(dir, `${'a'.repeat(32)}.result`);
    fs.writeFileSync(stale, '{}');
    const past = new Date(Date.now() - 2 * 24 * 3_600_000);
    fs.utimesSync(stale, past, past);
    await run(new DockerSandbox({ home, sessionId: id }), 'true');
    for (let i = 0; i < 100 && fs.existsSync(stale); i++) await new Promise((r) => setTimeout(r, 50));
    expect(fs.existsSync(stale)).toBe(false);
  });

  it('keeps host secrets such as OPENAI_API_KEY out of the container', async () => {
    process.env.OPENAI_API_KEY = 'sk-test-secret';
    const s = new DockerSandbox({ home, sessionId: sid() });
    const r = await run(s, 'env; cat /proc/1/environ | tr "\\0" "\\n"');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toContain('OPENAI_API_KEY');
    expect(r.stdout).not.toContain('sk-test');
    expect(r.stdout).toContain('HOME=/tmp');
  });

  it('does not mount the Docker socket', async () => {
    const r = await run(sb, 'ls -la /var/run/docker.sock /run/docker.sock');
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toContain('No such file');
  });

  it('removes orphans (managed containers of inactive sessions) and keeps the active ones', async () => {
    const orphan = sid();
    const active = sid();
    await new DockerSandbox({ home, sessionId: orphan }).ensure();
    await new DockerSandbox({ home, sessionId: active }).ensure();
    const removed = await removeOrphans(docker, [active, sbId], { home });
    expect(removed).toContain(containerName(orphan));
    expect(removed).not.toContain(containerName(active));
    await expect(docker.getContainer(containerName(orphan)).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect((await docker.getContainer(containerName(active)).inspect()).State.Running).toBe(true);
  });

  it('reports SANDBOX_UNAVAILABLE when Docker is unreachable', async () => {
    const s = new DockerSandbox({ home, sessionId: sid(), docker: new Docker({ socketPath: '/nonexistent/docker.sock' }) });
    const err = await run(s, 'true').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxError);
    expect(err).toMatchObject({ errorType: 'SANDBOX_UNAVAILABLE' });
    expect((err as Error).message).toContain('Docker Engine is not reachable');
  });

  it('reports SANDBOX_UNAVAILABLE naming the build command when the image is missing', async () => {
    const s = new DockerSandbox({ home, sessionId: sid(), image: 'harness-sandbox-missing:none' });
    const err = await run(s, 'true').catch((e: unknown) => e);
    expect(err).toMatchObject({ errorType: 'SANDBOX_UNAVAILABLE' });
    expect((err as Error).message).toMatch(/harness-sandbox-missing:none is missing.*sandbox build/);
  });
});
