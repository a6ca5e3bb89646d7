/**
 * What a message may be: non-empty and at most 256 KiB of UTF-8. The CLI checks before anything
 * starts (usage error, exit 2, no session), the session's update validator checks for every
 * client, long tasks come from a file or standard input, and `chat` reports a bad line and goes on.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendMessage, sessionState } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { MAX_MESSAGE_BYTES, sendMessageUpdate, utf8Length } from '../../deterministic/messages';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, HARNESS_BIN, parseJson, removeTempDirs, runCli, stackLines, tempDir, writeScript, type CliResult } from '../support/cli';

let h: TestHarness;
let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-cli-limits-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home') });
});
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

/** 300 KiB of text: over the limit, under the OS limit for a whole command line only as a file. */
const OVERSIZED = 'x'.repeat(300 * 1024);

/** Runs the CLI with `input` on standard input. */
function cliWithInput(args: string[], input: string, timeoutMs = 60_000): Promise<CliResult> {
  const child = spawn(process.execPath, [HARNESS_BIN, ...args], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdin.on('error', () => undefined); // the CLI may stop reading early (input too large)
  child.stdin.end(input);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) => {
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, errLines: stderr.split('\n').filter((l) => l.trim() !== '') });
    });
  });
}

/** A usage error: exit 2, one `error:` line and one `hint:` line, nothing on stdout, no stack. */
function expectUsageError(r: CliResult): string {
  const dump = describeResult(r);
  expect(r.code, dump).toBe(2);
  expect(r.errLines, dump).toHaveLength(2);
  expect(r.errLines[0], dump).toMatch(/^error: \S/);
  expect(r.errLines[1], dump).toMatch(/^hint: \S/);
  expect(stackLines(r.stderr), dump).toEqual([]);
  expect(r.stdout, dump).toBe('');
  return r.errLines[0]!;
}

/** The session was never started. */
async function expectNoSession(sessionId: string): Promise<void> {
  await expect(h.client.workflow.getHandle(sessionId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
}

/** A script whose one step answers only when the task it was given contains `marker`. */
function echoScript(marker: string): string {
  return writeScript(dir, { steps: [{ expect: { messages_contain: marker }, content: `got ${marker}. HARNESS_OK` }] });
}

describe('`run` with an empty task', () => {
  it.each([
    ['an empty argument', ''],
    ['only whitespace', '  \n\t '],
  ])('refuses %s as a usage error and starts no session', async (_what, task) => {
    const sessionId = newSessionId('empty');
    const r = await runCli(['run', '--model', `scripted:${echoScript('never')}`, '--session', sessionId, task], { env, cwd: dir });
    expect(expectUsageError(r)).toMatch(/the task must be non-empty text/);
    await expectNoSession(sessionId);
  });
});

describe('`run` with a task over 256 KiB', () => {
  it('refuses it from --file as a usage error naming the limit, and starts no session', async () => {
    const file = path.join(dir, 'big-task.txt');
    writeFileSync(file, OVERSIZED);
    const sessionId = newSessionId('big-file');
    const r = await runCli(['run', '--model', `scripted:${echoScript('never')}`, '--session', sessionId, '--file', file], { env, cwd: dir });
    const error = expectUsageError(r);
    expect(error).toContain(`${300 * 1024} bytes`);
    expect(error).toContain('256 KiB');
    await expectNoSession(sessionId);
  });

  it('refuses it from standard input as a usage error, and starts no session', async () => {
    const sessionId = newSessionId('big-stdin');
    const r = await cliWithInput(['run', '--model', `scripted:${echoScript('never')}`, '--session', sessionId, '-'], OVERSIZED);
    expect(expectUsageError(r)).toContain('256 KiB');
    await expectNoSession(sessionId);
  });

  it('counts UTF-8 bytes, not characters', async () => {
    // 100 Ki characters of 3 bytes each: 300 KiB.
    const sessionId = newSessionId('big-utf8');
    const file = path.join(dir, 'big-utf8.txt');
    writeFileSync(file, '中'.repeat(100 * 1024));
    const r = await runCli(['run', '--model', `scripted:${echoScript('never')}`, '--session', sessionId, '--file', file], { env, cwd: dir });
    expect(expectUsageError(r)).toContain('256 KiB');
    await expectNoSession(sessionId);
  });
});

describe('where `run` takes its task from', () => {
  it('reads the task from --file', async () => {
    const file = path.join(dir, 'task.txt');
    writeFileSync(file, 'Please summarise FILE-MARKER-41 for me.\n');
    const r = await runCli(['run', '--model', `scripted:${echoScript('FILE-MARKER-41')}`, '--file', file, '--json'], { env, cwd: dir });
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r).answer).toBe('got FILE-MARKER-41. HARNESS_OK');
  });

  it('reads the task from standard input with `-`', async () => {
    const r = await cliWithInput(['run', '--model', `scripted:${echoScript('STDIN-MARKER-17')}`, '-', '--json'], 'Task via STDIN-MARKER-17\n');
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r).answer).toBe('got STDIN-MARKER-17. HARNESS_OK');
  });

  it('refuses both a task argument and --file as a usage error', async () => {
    const file = path.join(dir, 'task-both.txt');
    writeFileSync(file, 'a task');
    expect(expectUsageError(await runCli(['run', 'a task', '--file', file], { env, cwd: dir }))).toMatch(/both a task argument and --file/);
  });

  it('refuses an unreadable --file as a usage error naming it', async () => {
    const file = path.join(dir, 'no-such-task.txt');
    expect(expectUsageError(await runCli(['run', '--file', file], { env, cwd: dir }))).toContain(file);
  });
});

describe('`answer` with an empty answer', () => {
  it('refuses it as a usage error before reaching the session', async () => {
    const r = await runCli(['answer', 'any-session', '   '], { env, cwd: dir });
    expect(expectUsageError(r)).toMatch(/the answer must be non-empty text/);
  });
});

describe('utf8Length (the validator has no Buffer)', () => {
  it('counts what Buffer.byteLength counts, for any code points and for lone surrogates', () => {
    const loneSurrogates = fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) });
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), loneSurrogates, fc.tuple(fc.string({ unit: 'binary' }), loneSurrogates).map(([a, b]) => a + b)), (text) => {
        expect(utf8Length(text)).toBe(Buffer.byteLength(text, 'utf8'));
      }),
    );
  });
});

describe('the sendMessage validator of the session', () => {
  it('refuses a message over 256 KiB from any client, and the session stays as it was', async () => {
    const sessionId = newSessionId('validator');
    const config = scriptedConfig({ steps: [{ content: 'First. HARNESS_OK' }, { content: 'never' }] });
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'hello' });
    expect((await waitForTurn(h.client, turnId, { pollMs: 100 })).kind).toBe('done');

    // Straight to the workflow, past the client-side check.
    const err = await h.client.workflow
      .getHandle(sessionId)
      .executeUpdate(sendMessageUpdate, { args: [{ text: 'y'.repeat(MAX_MESSAGE_BYTES + 1) }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((err as Error).cause?.message ?? (err as Error).message)).toMatch(/at most 256 KiB/);
    const state = await sessionState(h.client, sessionId);
    expect(state.turnCount).toBe(1);
    expect(state.status).toBe('idle');
    await h.client.workflow.getHandle(sessionId).terminate('test cleanup');
  });

  it('accepts a message of exactly 256 KiB', async () => {
    const sessionId = newSessionId('validator-max');
    const config = scriptedConfig({ steps: [{ content: 'Read it all. HARNESS_OK' }] });
    const { turnId } = await sendMessage(h.client, { taskQueue: h.taskQueue, sessionId, config, text: 'z'.repeat(MAX_MESSAGE_BYTES) });
    const out = await waitForTurn(h.client, turnId, { pollMs: 100 });
    expect(out.kind === 'done' && out.result.answer).toBe('Read it all. HARNESS_OK');
    await h.client.workflow.getHandle(sessionId).terminate('test cleanup');
  });
});

describe('`chat` with an empty or oversized line', () => {
  it('answers each with one error line and goes on with the next line', async () => {
    const script = writeScript(dir, { steps: [{ expect: { last_message_contains: 'CHAT-MARKER-9' }, content: 'Hello from chat. HARNESS_OK' }] });
    const input = ['', OVERSIZED, 'say hi CHAT-MARKER-9', '/exit', ''].join('\n');
    const r = await cliWithInput(['chat', '--model', `scripted:${script}`], input, 90_000);
    const dump = describeResult(r);
    expect(r.code, dump).toBe(0);
    expect(stackLines(r.stderr), dump).toEqual([]);
    const errors = r.errLines.filter((l) => l.startsWith('error:'));
    expect(errors, dump).toHaveLength(2);
    expect(errors[0]).toMatch(/must be non-empty text/);
    expect(errors[1]).toMatch(/at most 256 KiB/);
    expect(r.stdout, dump).toContain('Hello from chat. HARNESS_OK');
  }, 120_000);
});

describe('large output through a pipe', () => {
  it('`run --json` of a 1 MB answer arrives whole: the CLI exits only once stdout has drained', async () => {
    // Sixteen times the 64 KiB a pipe takes at once, and within the 1 MiB a script file may hold.
    const big = `${'y'.repeat(1_000_000)} HARNESS_OK`;
    const script = writeScript(dir, { steps: [{ content: big }] });
    const r = await runCli(['run', '--model', `scripted:${script}`, 'answer at length', '--json'], { env, cwd: dir });
    expect(r.code, describeResult(r).slice(0, 2000)).toBe(0);
    expect(parseJson<{ answer: string }>(r).answer).toBe(big);
  });
});
