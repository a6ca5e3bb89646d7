// Exactly-once run_shell execution against the real Docker Engine: no skips.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandbox } from '../../../activities/sandbox/docker-sandbox';
import { containerName, removeOrphans } from '../../../activities/sandbox/containers';
import { SandboxError } from '../../../activities/sandbox/docker-errors';
import type { Sandbox } from '../../../activities/sandbox/sandbox';
import type { ExecResult } from '../../../activities/sandbox/exec-record';
import { ExecRecords, execsDir, recordId } from '../../../activities/sandbox/exec-record';
import { runShell } from '../../../activities/tools/shell';
import { CHILD_BOOT } from './exec-child-boot';

const docker = new Docker();
const ROOT = path.resolve(__dirname, '..', '..', '..');
// Runs longer than the start grace (3 s) of a fresh claim, so a follower must see it running.
const AB = 'echo A >> log.txt; sleep 5; echo B >> log.txt; echo done';

let home: string;
const children: ChildProcess[] = [];
const sid = () => `once-${randomUUID().slice(0, 8)}`;
const ws = (sessionId: string) => path.join(home, 'workspaces', sessionId);
const log = (sessionId: string) => fs.readFileSync(path.join(ws(sessionId), 'log.txt'), 'utf8');

/** Resolves once log.txt of the session holds `text` (the command is under way). */
async function logged(sessionId: string, text: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (fs.existsSync(path.join(ws(sessionId), 'log.txt')) && log(sessionId).includes(text)) return;
    await sleep(50);
  }
  throw new Error(`log.txt of ${sessionId} never showed ${JSON.stringify(text)}`);
}

/** Starts a separate worker process that runs `command` under `key` for the session. */
function startChild(sessionId: string, key: string, command: string): ChildProcess {
  const child = spawn(process.execPath, ['-e', CHILD_BOOT], {
    cwd: ROOT,
    env: { ...process.env, EXEC_CHILD_ARGS: JSON.stringify({ home, sessionId, key, command }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  return child;
}

async function killHard(child: ChildProcess): Promise<void> {
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await gone;
}

beforeAll(() => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'once-test-')));
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await removeOrphans(docker, [], { home });
  fs.rmSync(home, { recursive: true, force: true });
});

describe('exactly-once exec by call key', () => {
  it('runs a command once when the same key is called twice, and the second call returns the first outcome', async () => {
    const id = sid();
    const cmd = 'echo ran >> log.txt; head -c 8 /dev/urandom | od -An -tx1; echo to-stderr >&2';
    const first = await new DockerSandbox({ home, sessionId: id }).exec(cmd, { timeoutMs: 20_000, key: 'turn-1/call-1' });
    expect(first).toMatchObject({ exitCode: 0, stderr: 'to-stderr\n' });
    const again = await new DockerSandbox({ home, sessionId: id }).exec(cmd, { timeoutMs: 20_000, key: 'turn-1/call-1' });
    expect(again).toEqual(first);
    expect(log(id)).toBe('ran\n');
    // Another key is another call: it runs.
    await new DockerSandbox({ home, sessionId: id }).exec(cmd, { timeoutMs: 20_000, key: 'turn-1/call-2' });
    expect(log(id)).toBe('ran\nran\n');
    // The record keeps the result, not the raw output files.
    const rid = recordId('turn-1/call-1');
    const entries = fs.readdirSync(execsDir(home, id));
    expect(entries).toEqual(expect.arrayContaining([`${rid}.claim`, `${rid}.result`]));
    expect(entries).not.toContain(rid);
  });

  it('makes a second worker with the same key wait for the command the first one is running, and report its single outcome', async () => {
    const id = sid();
    const first = new DockerSandbox({ home, sessionId: id }).exec(AB, { timeoutMs: 20_000, key: 'turn-1/call-1' });
    await logged(id, 'A');
    const second = await new DockerSandbox({ home, sessionId: id }).exec(AB, { timeoutMs: 20_000, key: 'turn-1/call-1' });
    expect(second).toMatchObject({ exitCode: 0, stdout: 'done\n', timedOut: false });
    expect(await first).toEqual(second);
    expect(log(id)).toBe('A\nB\n');
  });

  it('finishes the call on a new worker after the first worker process is SIGKILLed mid-command, without running it again', async () => {
    const id = sid();
    const child = startChild(id, 'turn-1/call-1', AB);
    await logged(id, 'A');
    await killHard(child);
    const r = await new DockerSandbox({ home, sessionId: id }).exec(AB, { timeoutMs: 20_000, key: 'turn-1/call-1' });
    expect(r).toMatchObject({ exitCode: 0, stdout: 'done\n', timedOut: false });
    expect(r.interrupted).toBeUndefined();
    expect(log(id)).toBe('A\nB\n');
  });

  it('gives a retry that comes after the command ended its outcome and its own duration, not the time until the retry', async () => {
    const id = sid();
    const child = startChild(id, 'turn-1/call-1', AB);
    await logged(id, 'A');
    await killHard(child);
    await logged(id, 'B');
    await sleep(2_000);
    const claim = await new ExecRecords(execsDir(home, id), undefined).readClaim(recordId('turn-1/call-1'));
    const asked = Date.now();
    const r = await new DockerSandbox({ home, sessionId: id }).exec(AB, { timeoutMs: 20_000, key: 'turn-1/call-1' });
    expect(r).toMatchObject({ exitCode: 0, stdout: 'done\n', timedOut: false });
    expect(log(id)).toBe('A\nB\n');
    expect(r.durationMs).toBeLessThan(asked - claim!.startedAt);
  });

  it('reports an earlier run as interrupted when its worker died and the container restarted, and does not run it again', async () => {
    const id = sid();
    const child = startChild(id, 'turn-1/call-1', AB);
    await logged(id, 'A');
    await killHard(child);
    await docker.getContainer(containerName(id)).restart({ t: 0 });
    const s = new DockerSandbox({ home, sessionId: id });
    const r = await s.exec(AB, { timeoutMs: 20_000, key: 'turn-1/call-1' });
    expect(r).toMatchObject({ interrupted: true, exitCode: -1 });
    const shown = await runShell(s, { command: AB }, { callKey: 'turn-1/call-1' });
    expect(shown).toMatchObject({ ok: false, error_type: 'EXECUTION_ERROR', recoverable: true, result: { exit_code: null } });
    expect(shown.message).toMatch(/interrupted.*may have partly happened.*not run again/);
    expect(shown.suggestion).toMatch(/check the workspace/);
    await sleep(5_500);
    expect(log(id)).toBe('A\n');
  });

  it('reports a command whose container was removed mid-run as interrupted, and a retry of the key does not run it again', async () => {
    const id = sid();
    const s = new DockerSandbox({ home, sessionId: id });
    const running = s.exec(AB, { timeoutMs: 20_000, key: 'turn-1/call-1' });
    await logged(id, 'A');
    await docker.getContainer(containerName(id)).remove({ force: true });
    const r = await running;
    expect(r).toMatchObject({ interrupted: true, exitCode: -1 });
    expect(await s.exec(AB, { timeoutMs: 20_000, key: 'turn-1/call-1' })).toEqual(r);
    expect(log(id)).toBe('A\n');
    // The session goes on: a new call recreates the container.
    expect(await s.exec('echo fresh', { timeoutMs: 20_000, key: 'turn-1/call-2' })).toMatchObject({ exitCode: 0, stdout: 'fresh\n' });
  });

  it('treats a claim nobody is running any more as interrupted instead of running the command', async () => {
    const id = sid();
    const s = new DockerSandbox({ home, sessionId: id });
    await s.ensure();
    // A worker that died right after claiming, before its exec started.
    const records = new ExecRecords(execsDir(home, id), { uid: 1000, gid: 1000 });
    const meta = { v: 1 as const, key: 'turn-1/call-1', commandSha: '', timeoutMs: 20_000, maxOutputBytes: 20_000, startedAt: Date.now() - 10_000 };
    const { commandSha } = await import('../../../activities/sandbox/exec-record');
    expect(await records.claim(recordId('turn-1/call-1'), { ...meta, commandSha: commandSha('echo ran >> log.txt') })).toBe(true);
    const r = await s.exec('echo ran >> log.txt', { timeoutMs: 20_000, key: 'turn-1/call-1' });
    expect(r).toMatchObject({ interrupted: true });
    expect(fs.existsSync(path.join(ws(id), 'log.txt'))).toBe(false);
  });

  it('does not retry a sandbox failure that came after the command started, and a later retry of the key reports the real outcome', async () => {
    const id = sid();
    const real = new DockerSandbox({ home, sessionId: id });
    let calls = 0;
    const counting: Sandbox = {
      exec: (cmd, opts) => (calls++, real.exec(cmd, opts)),
      ensure: () => real.ensure(),
      remove: () => real.remove(),
    };
    const container = docker.getContainer(containerName(id));
    // Paused once the command is under way: Docker can neither finish nor kill it.
    const pausing = logged(id, 'A').then(() => container.pause());
    const r = await runShell(counting, { command: 'echo A >> log.txt; sleep 1; echo B >> log.txt', timeout_ms: 1_000 }, { callKey: 'turn-1/call-1' });
    await pausing;
    expect(calls).toBe(1);
    expect(r).toMatchObject({ ok: false, error_type: 'SANDBOX_UNAVAILABLE' });
    expect(r.message).toMatch(/may have run/);
    await container.unpause();
    const later: ExecResult = await real.exec('echo A >> log.txt; sleep 1; echo B >> log.txt', { timeoutMs: 1_000, key: 'turn-1/call-1' });
    expect(later.interrupted).toBeUndefined();
    expect(log(id).startsWith('A\n')).toBe(true);
    expect(log(id).match(/A/g)).toHaveLength(1);
  });

  it('marks a SandboxError as not started when the command never began (Docker unreachable)', async () => {
    const s = new DockerSandbox({ home, sessionId: sid(), docker: new Docker({ socketPath: '/nonexistent/docker.sock' }) });
    const err = await s.exec('true', { timeoutMs: 5_000, key: 'turn-1/call-1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxError);
    expect((err as SandboxError).started).toBe(false);
  });
});
