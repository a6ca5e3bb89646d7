/**
 * Commands that wait for a turn ride out what the turn itself survives: Temporal going down
 * and coming back, no worker answering, a model endpoint that never answers. They say what is
 * wrong in one line and keep waiting (bounded by --wait-timeout); commands that cannot go on
 * end with one `error:` and one `hint:` line, never a stack.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port';
import { temporalSettings } from '../../client/temporal-settings';
import { kill, spawnWorker } from '../support/processes';
import { startOwnServer } from '../support/embedded-procs';
import { endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';
import { startSilentEndpoint, type SilentEndpoint } from '../support/silent-endpoint';
import { cliEnv, describeResult, HARNESS_BIN, removeTempDirs, runCli, spawnCli, stackLines, tempDir, writeScript, type CliResult } from '../support/cli';

let h: TestHarness;
let dir: string;
let env: NodeJS.ProcessEnv;
let endpoint: SilentEndpoint;

beforeAll(async () => {
  // The key only makes the worker willing to call the silent endpoint; nothing checks it.
  h = await startHarness({ env: { OPENAI_API_KEY: 'test-key' } });
  endpoint = await startSilentEndpoint();
  h.declarations.add({ modelEndpoints: [endpoint.url] });
  dir = tempDir('harness-cli-waits-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home') });
});
afterAll(async () => {
  await endpoint?.close();
  await h?.stop();
  removeTempDirs();
});

/** The end of a failed command: exactly one `error:` line, then one `hint:` line, and no stack. */
function expectErrorAndHint(r: CliResult, code: number): { error: string; hint: string } {
  const dump = describeResult(r);
  expect(r.code, dump).toBe(code);
  expect(stackLines(r.stderr), dump).toEqual([]);
  expect(r.stderr, dump).not.toMatch(/unexpected error/);
  const errors = r.errLines.filter((l) => l.startsWith('error:'));
  expect(errors, dump).toHaveLength(1);
  const at = r.errLines.indexOf(errors[0]!);
  expect(r.errLines[at + 1], dump).toMatch(/^hint: \S/);
  expect(r.errLines.length, dump).toBe(at + 2);
  return { error: errors[0]!, hint: r.errLines[at + 1]! };
}

/** Terminates a session (and its turn) left running by a test. */
async function endRunning(sessionId: string): Promise<void> {
  await h.client.workflow
    .getHandle(sessionId)
    .terminate('test cleanup')
    .catch(() => undefined);
}

describe('a wait bounded by --wait-timeout', () => {
  it('ends with one error and hint saying the session keeps going, and exits 1', async () => {
    const sessionId = newSessionId('wait-timeout');
    const script = writeScript(dir, { steps: [{ fault: { delay_ms: 60_000 }, content: 'late. HARNESS_OK' }] });
    try {
      const r = await runCli(['run', '--model', `scripted:${script}`, '--session', sessionId, '--wait-timeout', '3', 'take your time'], {
        env,
        cwd: dir,
        timeoutMs: 90_000,
      });
      const { error, hint } = expectErrorAndHint(r, 1);
      expect(error).toMatch(new RegExp(`^error: stopped waiting for turn ${sessionId}/turn-1 after 3 s`));
      expect(error).toMatch(/the session keeps going/);
      expect(hint).toContain(`harness status ${sessionId}`);
      // The turn did go on without the command.
      expect((await h.client.workflow.getHandle(`${sessionId}/turn-1`).describe()).status.name).toBe('RUNNING');
    } finally {
      await endRunning(sessionId);
    }
  }, 120_000);

  it('refuses a --wait-timeout that is not a positive number of seconds (exit 2)', async () => {
    const r = await runCli(['run', '--wait-timeout', '0', 'do it'], { env, cwd: dir, timeoutMs: 30_000 });
    expectErrorAndHint(r, 2);
    expect(r.stderr).toMatch(/--wait-timeout/);
  });
});

describe('no worker polling the task queue', () => {
  const unserved = `waits-unserved-${process.pid}`;
  const unservedEnv = () => ({ ...env, HARNESS_TASK_QUEUE: unserved });

  it('`run` says within seconds that no worker polls, with a hint to start one, and starts nothing', async () => {
    const sessionId = newSessionId('no-worker');
    const script = writeScript(dir, { steps: [{ content: 'never. HARNESS_OK' }] });
    const r = await runCli(['run', '--model', `scripted:${script}`, '--session', sessionId, 'hello'], { env: unservedEnv(), cwd: dir, timeoutMs: 60_000 });
    const { error, hint } = expectErrorAndHint(r, 1);
    expect(error).toContain(`no worker polls task queue ${unserved}`);
    expect(hint).toContain('harness worker');
    expect(hint).toMatch(/TEMPORAL_ADDRESS/);
    await expect(h.client.workflow.getHandle(sessionId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  }, 90_000);

  it('`status` of a session whose worker is gone answers from history at once, saying no worker polls', async () => {
    const sessionId = newSessionId('no-worker-status');
    // A session on a task queue nobody polls: what remains when its worker is gone for good.
    await h.client.workflow.start('sessionWorkflow', {
      taskQueue: unserved,
      workflowId: sessionId,
      args: [{ sessionId, config: endpointConfig(endpoint.url) }],
    });
    try {
      // Waiting for a worker is --follow's and run's job: status says where things stand.
      const r = await runCli(['status', sessionId, '--wait-timeout', '5'], { env, cwd: dir, timeoutMs: 60_000 });
      expect(r.code, describeResult(r)).toBe(0);
      expect(r.stdout.split('\n')[0], describeResult(r)).toBe(`session ${sessionId}: idle`);
      expect(r.stdout, describeResult(r)).toMatch(new RegExp(`^\\(no worker polls task queue ${unserved} on Temporal at \\S+ — shown from history; `, 'm'));
      expect(r.errLines, describeResult(r)).toEqual([]);
    } finally {
      await endRunning(sessionId);
    }
  }, 90_000);
});

describe('a model endpoint that accepts the request and never answers', () => {
  it('`run` prints the attempt, the endpoint and the last failure while it waits, and the turn fails naming the endpoint', async () => {
    const cwd = tempDir('harness-cli-silent-');
    const config = path.join(cwd, 'silent.config.json');
    writeFileSync(config, JSON.stringify({ baseUrl: endpoint.url, limits: { modelTimeoutSec: 8, modelHeartbeatSec: 2, modelMaxAttempts: 3 } }));
    const sessionId = newSessionId('silent-cli');
    const before = endpoint.requests.length;
    const r = await runCli(['run', '--config', config, '--model', 'test-model', '--session', sessionId, 'hello?'], { env, cwd, timeoutMs: 120_000 });
    const dump = describeResult(r);
    expect(r.code, dump).toBe(1);
    expect(stackLines(r.stderr), dump).toEqual([]);
    const progress = r.errLines.filter((l) => l.startsWith('… waiting for the model at '));
    expect(progress.length, dump).toBeGreaterThan(0);
    // The second attempt is announced with the endpoint and why the first one failed; two requests, two attempts.
    expect(endpoint.requests.slice(before).filter((q) => q.path.endsWith('/chat/completions')), dump).toHaveLength(2);
    expect(progress.some((l) => l.includes(endpoint.url) && /attempt 2 of 3; last failure: the model endpoint .* did not answer within/.test(l)), dump).toBe(true);
    expect(r.stderr).toMatch(new RegExp(`^error: the model endpoint ${endpoint.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} did not answer within 7 s`, 'm'));
    expect(r.stderr).not.toMatch(/StartToClose/i);
  }, 150_000);
});

describe('Ctrl-D at an inline question', () => {
  it('leaves the question pending and exits 3 with the `harness answer` command as hint', async () => {
    const sessionId = newSessionId('ctrl-d');
    const script = writeScript(dir, {
      steps: [
        { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
        { expect: { last_message_contains: 'green' }, content: 'You chose green. HARNESS_OK' },
      ],
    });
    const out = await inTerminal(['run', '--model', `scripted:${script}`, '--session', sessionId, 'pick a colour'], env, 'Which colour?');
    const dump = `exit ${out.code}\n${out.output}`;
    expect(out.code, dump).toBe(3);
    expect(out.output, dump).not.toMatch(/unexpected error|^\s+at /m);
    expect(out.output, dump).toMatch(/^error: .*question stays pending/m);
    expect(out.output, dump).toMatch(new RegExp(`^hint: .*harness answer ${sessionId}`, 'm'));

    const answered = await runCli(['answer', sessionId, 'green'], { env, cwd: dir, timeoutMs: 60_000 });
    expect(answered.code, describeResult(answered)).toBe(0);
    expect(answered.stdout).toContain('You chose green. HARNESS_OK');
  }, 120_000);
});

/** Waits until the turn `run` started (named on its stderr) has its model call running; returns the session id. */
async function modelCallInFlight(address: string, stderr: () => string): Promise<string> {
  const client = new Client({ connection: await Connection.connect({ address }) });
  try {
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      const sessionId = /^session (\S+) · /m.exec(stderr())?.[1];
      if (sessionId) {
        const d = await client.workflow.getHandle(`${sessionId}/turn-1`).describe().catch(() => undefined);
        if (d?.raw.pendingActivities?.some((a) => a.activityType?.name === 'callModel' && a.lastStartedTime)) return sessionId;
      }
      await sleep(250);
    }
    throw new Error(`the model call never started:\n${stderr()}`);
  } finally {
    await client.connection.close();
  }
}

/**
 * Runs the CLI on a pseudo-terminal (so it prompts inline), sends Ctrl-D once `prompt` shows,
 * and returns everything it printed and its exit code. Python's pty module does the terminal.
 */
async function inTerminal(args: string[], cliEnvironment: NodeJS.ProcessEnv, prompt: string): Promise<{ code: number; output: string }> {
  const helper = path.join(dir, 'pty-eof.py');
  const result = path.join(dir, `pty-result-${Date.now()}.json`);
  writeFileSync(
    helper,
    [
      'import json, os, pty, select, sys, time',
      'result, marker, argv = sys.argv[1], sys.argv[2], sys.argv[3:]',
      'pid, fd = pty.fork()',
      'if pid == 0:',
      '    os.execvp(argv[0], argv)',
      'out, sent, deadline = b"", False, time.time() + 100',
      'while time.time() < deadline:',
      '    if not sent and marker.encode() in out:',
      '        time.sleep(0.3)',
      '        os.write(fd, b"\\x04")',
      '        sent = True',
      '    r, _, _ = select.select([fd], [], [], 0.2)',
      '    if r:',
      '        try:',
      '            data = os.read(fd, 65536)',
      '        except OSError:',
      '            break',
      '        if not data:',
      '            break',
      '        out += data',
      '_, status = os.waitpid(pid, 0)',
      'code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1',
      'json.dump({"code": code, "output": out.decode("utf-8", "replace")}, open(result, "w"))',
    ].join('\n'),
  );
  const child: ChildProcess = spawn('python3', [helper, result, prompt, process.execPath, HARNESS_BIN, ...args], { cwd: dir, env: cliEnvironment, stdio: 'ignore' });
  const timer = setTimeout(() => child.kill('SIGKILL'), 110_000);
  await new Promise<void>((resolve) => child.once('close', () => resolve()));
  clearTimeout(timer);
  const parsed = JSON.parse(readFileSync(result, 'utf8')) as { code: number; output: string };
  // What a person would read: line ends as written, terminal control sequences dropped.
  // eslint-disable-next-line no-control-regex
  return { code: parsed.code, output: parsed.output.replace(/\r\n/g, '\n').replace(/\x1b\[[0-9;]*[A-Za-z]/g, '') };
}

describe('Temporal going away while `run` waits', () => {
  let server: ChildProcess | undefined;
  let worker: ChildProcess | undefined;
  let run: ChildProcess | undefined;
  const home = tempDir('harness-cli-outage-');

  afterAll(async () => {
    await kill(run, 'SIGKILL');
    await kill(worker);
    await kill(server);
  }, 60_000);

  it('says Temporal is unreachable in one line, keeps waiting, and prints the result once it is back', async () => {
    const port = await freePort();
    const settings = temporalSettings({ HARNESS_EMBEDDED_PORT: String(port), HARNESS_UI_PORT: String(await freePort()) });
    // The same port and database file each time: the restarted server has the session.
    const start = () => startOwnServer(settings, home);
    server = await start();
    const outageEnv = cliEnv({ TEMPORAL_ADDRESS: settings.address, HARNESS_TASK_QUEUE: 'outage', HARNESS_HOME: path.join(home, 'harness') });
    worker = await spawnWorker(outageEnv);

    // The model takes long enough that the turn is still in its model call after the outage.
    const script = writeScript(dir, { steps: [{ fault: { delay_ms: 45_000 }, content: 'Outage survived. HARNESS_OK' }] });
    run = spawnCli(['run', '--model', `scripted:${script}`, 'wait through an outage'], { env: outageEnv, cwd: dir });
    let stdout = '';
    let stderr = '';
    run.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    run.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => run!.once('close', (code) => resolve(code)));
    const until = async (what: RegExp, ms: number) => {
      const deadline = Date.now() + ms;
      while (!what.test(stderr) && Date.now() < deadline) await sleep(200);
      expect(stderr, `stderr never matched ${what}:\n${stderr}`).toMatch(what);
    };

    // Stop the server while the model call is in flight.
    const sessionId = await modelCallInFlight(settings.address, () => stderr);
    await kill(server);
    await until(/^waiting: Temporal at 127\.0\.0\.1:\d+ is unreachable .*; retrying$/m, 60_000);

    // `status` meanwhile waits too; past its --wait-timeout, one line saying Temporal cannot be reached, and a hint.
    const status = await runCli(['status', sessionId, '--wait-timeout', '4'], { env: outageEnv, cwd: dir, timeoutMs: 90_000 });
    const { error } = expectErrorAndHint(status, 1);
    expect(error).toMatch(/^error: stopped waiting for session \S+ after \d+ s \(Temporal at \S+ is unreachable \(connection refused\)\); nothing was changed$/);

    await sleep(12_000); // about 20 s down in all
    server = await start();
    const code = await Promise.race([exited, sleep(150_000).then(() => 'still running')]);
    const dump = `exit ${String(code)}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`;
    expect(code, dump).toBe(0);
    expect(stdout, dump).toContain('Outage survived. HARNESS_OK');
    expect(stackLines(stderr), dump).toEqual([]);
    expect(stderr, dump).not.toMatch(/unexpected error/);
    // The last trouble before recovery may be the worker reconnecting after the server came back.
    expect(stderr, dump).toMatch(/^… (Temporal|a worker) answers again$/m);
  }, 400_000);
});
