// The shell session per container, against the real Docker Engine: commands go through one
// long-lived process (not a Docker exec each), reach the shell byte for byte, and a session that
// dies (killed inside the container, or its worker gone) is replaced without losing a command.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DockerSandbox } from '../../../activities/sandbox/docker-sandbox';
import { containerName, removeOrphans } from '../../../activities/sandbox/containers';
import { encodeCommand, SESSION_IDLE_SEC, START_ACK_MS } from '../../../activities/sandbox/exec-session';
import { START_GRACE_MS } from '../../../activities/sandbox/exec-follow';
import { recordId } from '../../../activities/sandbox/exec-record';
import { runProbe } from '../../../activities/sandbox/exec-wrapper';
import { CHILD_BOOT } from './exec-child-boot';
import { figure } from '../../support/figures';

const docker = new Docker();
let home: string;
const sid = () => `sess-${randomUUID().slice(0, 8)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(() => {
  home = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'exec-session-test-')));
});
afterAll(async () => {
  await removeOrphans(docker, [], { home });
  fs.rmSync(home, { recursive: true, force: true });
});

/** The Docker execs started in the container between `since` and now, as dockerd's events name them (`exec_start: <command>`). */
async function execsStarted(name: string, since: number): Promise<string[]> {
  const until = Math.ceil(Date.now() / 1000) + 1;
  await sleep(1_100);
  const stream = (await docker.getEvents({ since: Math.floor(since / 1000), until, filters: { container: [name], event: ['exec_start'] } })) as NodeJS.ReadableStream;
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => String((JSON.parse(l) as { status?: string }).status).slice(0, 120));
}

/** The session shells running in the container (their pids): an argument exactly `harness-session` (this probe has it only inside longer ones). */
async function sessionPids(name: string): Promise<string[]> {
  const out = await runProbe(docker.getContainer(name), `for p in /proc/[0-9]*; do grep -qsxzF harness-session "$p/cmdline" && echo "\${p#/proc/}"; done; true`);
  return out.split('\n').map((l) => l.replace(/[^0-9]/g, '')).filter(Boolean);
}

/** Random text with what breaks line protocols and shell quoting: backslashes, newlines, CR, %, quotes, escapes, non-ASCII. */
function nastyText(rand: () => number, length: number): string {
  const alphabet = ['\\', '\n', '\r', '\t', ' ', '%', '%b', '\\n', '\\\\', "'", '"', '$', '`', '\\c', '\\0', '\\x41', 'é', '漢', '😀', 'a', 'Z', '0', ';', '#', '\u0001', '\u007f'];
  let s = '';
  for (let i = 0; i < length; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
  return s;
}

function seeded(seed: number): () => number {
  let x = seed >>> 0;
  return () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe('shell session per container', () => {
  it('runs every command after the first through one session, not a Docker exec each', async () => {
    const id = sid();
    const sb = new DockerSandbox({ home, sessionId: id });
    await sb.exec('true', { timeoutMs: 10_000 });
    // Events count by the second: start counting in the next one.
    await sleep(1_100);
    const since = Date.now();
    for (let i = 0; i < 10; i++) expect(await sb.exec(`echo ${i}`, { timeoutMs: 10_000, key: `k${i}` })).toMatchObject({ exitCode: 0, stdout: `${i}\n` });
    // The probe in sessionPids below is a Docker exec of its own, so look first. No command had
    // a Docker exec of its own (the wrapper's); a session opened again, once at most, is told.
    const started = await execsStarted(containerName(id), since);
    expect(started.filter((c) => c.includes(`harness-exec`)), started.join('\n')).toEqual([]);
    expect(started.length, started.join('\n')).toBeLessThanOrEqual(1);
    if (started.length) figure('exec-session', `a Docker exec during 10 session commands: ${started[0]}`);
    expect(await sessionPids(containerName(id))).toHaveLength(1);

    // The same commands without sessions: one Docker exec each.
    const plain = new DockerSandbox({ home, sessionId: id, sessions: false });
    await sleep(1_100);
    const since2 = Date.now();
    for (let i = 0; i < 3; i++) await plain.exec('true', { timeoutMs: 10_000 });
    expect(await execsStarted(containerName(id), since2)).toHaveLength(3);
  }, 60_000);

  it('hands the shell exactly the command it was given, for generated commands full of escapes and newlines', async () => {
    const sb = new DockerSandbox({ home, sessionId: sid() });
    const rand = seeded(20261202);
    for (let i = 0; i < 60; i++) {
      // bash runs the first line and exits before it parses the rest: any text may follow.
      const cmd = `printf %s "$BASH_EXECUTION_STRING"; exit 0\n${nastyText(rand, 1 + Math.floor(rand() * 80))}`;
      const r = await sb.exec(cmd, { timeoutMs: 10_000 });
      expect(r.exitCode, JSON.stringify(cmd)).toBe(0);
      expect(r.stdout, JSON.stringify(cmd)).toBe(cmd);
    }
    // A long one too, and one that ends in newlines.
    const long = `printf %s "$BASH_EXECUTION_STRING"; exit 0\n${nastyText(rand, 20_000)}\n\n`;
    expect((await sb.exec(long, { timeoutMs: 20_000, maxOutputBytes: 1 << 20 })).stdout).toBe(long);
  }, 120_000);

  it('encodes a command on one line, backslashes doubled', () => {
    expect(encodeCommand('a\\nb\nc\\')).toBe('a\\\\nb\\nc\\\\');
    expect(encodeCommand('x\ny').includes('\n')).toBe(false);
  });

  it('replaces a session killed inside the container: a command sent into the dead one runs once, and the one it had started keeps its result', async () => {
    const id = sid();
    const sb = new DockerSandbox({ home, sessionId: id });
    await sb.exec('true', { timeoutMs: 10_000 });
    const [pid] = await sessionPids(containerName(id));
    expect(pid).toBeDefined();
    const running = sb.exec('sleep 3; echo survived > survived.txt; echo ok', { timeoutMs: 20_000, key: 'long' });
    await sleep(500);
    await runProbe(docker.getContainer(containerName(id)), `kill -9 ${pid}`);
    // The running command holds the dead session's stream open, so nothing says it died: this
    // line goes nowhere, its start is never acknowledged, and it runs once all the same.
    const t0 = Date.now();
    const sentIntoDead = await sb.exec('echo x >> once.txt; echo again', { timeoutMs: 10_000, key: 'after-kill' });
    figure('exec-session', `a command sent into a session killed mid-command ran once, ${Date.now() - t0} ms after it was sent (no start line in ${START_ACK_MS} ms, then the ${START_GRACE_MS} ms start grace)`);
    expect(sentIntoDead).toMatchObject({ exitCode: 0, stdout: 'again\n' });
    expect(fs.readFileSync(path.join(home, 'workspaces', id, 'once.txt'), 'utf8')).toBe('x\n');
    // Followed to its real outcome.
    const r = await running;
    expect(r).toMatchObject({ exitCode: 0, stdout: 'ok\n' });
    expect(r.interrupted).toBeUndefined();
    expect(fs.readFileSync(path.join(home, 'workspaces', id, 'survived.txt'), 'utf8')).toBe('survived\n');
    // The next command opens a new session.
    expect(await sb.exec('echo third', { timeoutMs: 10_000 })).toMatchObject({ exitCode: 0, stdout: 'third\n' });
    const now = await sessionPids(containerName(id));
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(pid);
    // Retries of both calls get their stored results and run nothing.
    expect(await sb.exec('sleep 3; echo survived > survived.txt; echo ok', { timeoutMs: 20_000, key: 'long' })).toMatchObject({ exitCode: 0, stdout: 'ok\n' });
    expect(await sb.exec('echo x >> once.txt; echo again', { timeoutMs: 10_000, key: 'after-kill' })).toMatchObject({ exitCode: 0, stdout: 'again\n' });
    expect(fs.readFileSync(path.join(home, 'workspaces', id, 'once.txt'), 'utf8')).toBe('x\n');
  }, 60_000);

  it('reads outcomes from the records only: a command that forges `done` lines for another on the session stream changes nothing', async () => {
    const id = sid();
    const sb = new DockerSandbox({ home, sessionId: id });
    await sb.exec('true', { timeoutMs: 10_000 });
    const victim = sb.exec('sleep 2; echo genuine', { timeoutMs: 20_000, key: 'victim' });
    await sleep(300);
    // The hostile command writes to the session's own stdout (the same user may open it).
    const forged = await sb.exec(
      `for p in /proc/[0-9]*; do grep -qsxzF harness-session "$p/cmdline" && { echo "done ${recordId('victim')}" > "$p/fd/1"; echo forged; }; done; true`,
      { timeoutMs: 10_000 },
    );
    expect(forged.stdout).toBe('forged\n');
    const r = await victim;
    expect(r).toMatchObject({ exitCode: 0, stdout: 'genuine\n' });
    expect(r.interrupted).toBeUndefined();
  }, 60_000);

  it('ends the session inside the container when its worker is SIGKILLed, and the command it started still ends and is recorded', async () => {
    const id = sid();
    const command = 'sleep 2; echo hi';
    const child = spawn(process.execPath, ['-e', CHILD_BOOT], {
      cwd: path.resolve(__dirname, '..', '..', '..'),
      env: { ...process.env, EXEC_CHILD_ARGS: JSON.stringify({ home, sessionId: id, key: 'one', command }) },
      stdio: 'ignore',
    });
    const gone = new Promise((r) => child.once('exit', r));
    for (let i = 0; i < 400 && (await sessionPids(containerName(id)).catch(() => [])).length === 0; i++) await sleep(100);
    expect(await sessionPids(containerName(id))).toHaveLength(1);
    child.kill('SIGKILL');
    await gone;
    // Its input closed with the worker's connection (or, at the latest, its idle time ran out).
    for (let i = 0; i < (SESSION_IDLE_SEC + 5) * 4 && (await sessionPids(containerName(id))).length > 0; i++) await sleep(250);
    expect(await sessionPids(containerName(id))).toEqual([]);
    // The next worker's attempt of the same call gets the one outcome of that command.
    const again = await new DockerSandbox({ home, sessionId: id }).exec(command, { timeoutMs: 20_000, key: 'one' });
    expect(again).toMatchObject({ exitCode: 0, stdout: 'hi\n' });
    expect(again.interrupted).toBeUndefined();
  }, 90_000);
});
