/**
 * `harness fork` as a user runs it: a recorded turn (under the default policy, its calls
 * approved) is forked at a step; the new session asks the model nothing for the steps before
 * (counted on the scripted server), reads the recorded conversation with the edits asked for,
 * finds the files the turn wrote before the step in its workspace, and says what it could not
 * restore. Bad steps and files get one line and a hint.
 */
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModelServer } from '../../scripted-model/server';
import { DEFAULT_POLICY, endpointConfig, newSessionId, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir, writeScript } from '../support/cli';

let h: TestHarness;
let server: ScriptedModelServer;
let env: NodeJS.ProcessEnv;
let source: string;
let turnId: string;
const cli = (args: string[]) => runCli(['fork', ...args], { env, timeoutMs: 120_000 });
const indexesOf = (sessionId: string) => server.requests.filter((q) => q.session === sessionId && q.purpose !== 'compress').map((q) => q.index);

beforeAll(async () => {
  h = await startHarness();
  server = await startScriptedModel();
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(tempDir('harness-cli-fork-'), 'home') });
  source = newSessionId('fork-src');
  server.registerScript(source, {
    steps: [
      { tool_calls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'v1\n' } }] },
      { tool_calls: [{ name: 'remember', arguments: { key: 'color', value: 'blue' } }] },
      { tool_calls: [{ name: 'run_shell', arguments: { command: 'echo side >> side.txt' } }] },
      { tool_calls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'v2\n' } }] },
      { content: 'The source is done.' },
    ],
  });
  const r = await h.finishApproving(source, endpointConfig(server.url, {}, DEFAULT_POLICY), 'write notes, remember a colour, run a command');
  expect(r.terminated_by).toBe('final_answer');
  turnId = r.turnId;
}, 120_000);
afterAll(async () => {
  await server?.close();
  await h?.stop();
  removeTempDirs();
});

describe('harness fork', () => {
  it('goes on from step 4 with no model call for steps 1–3, the edited system prompt, the memory and files of step 3', async () => {
    const fork = newSessionId('fork');
    // The fork's model calls are numbered on from the recorded ones: its first is index 3.
    server.registerScript(fork, {
      steps: [
        ...Array.from({ length: 3 }, () => ({ content: 'never asked' })),
        { expect: { system_contains: 'You review notes.', messages_contain: 'echo side' }, tool_calls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
        { expect: { last_message_contains: 'v1' }, content: 'The fork read v1. HARNESS_OK' },
      ],
    });
    const systemFile = path.join(tempDir('harness-fork-system-'), 'system.txt');
    writeFileSync(systemFile, 'You review notes.');
    const r = await cli([turnId, '--at-step', '4', '--edit-system', systemFile, '--session', fork, '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r)).toMatchObject({ terminated_by: 'final_answer', answer: 'The fork read v1. HARNESS_OK' });
    expect(r.errLines).toEqual([
      `forked ${turnId} at step 4 into session ${fork}: steps 1–3 taken from the record (3 model calls not made)`,
      'restored: notes.txt',
      'not restored: run_shell at step 3 (echo side >> side.txt): its effects are not in the record',
    ]);
    expect(indexesOf(fork)).toEqual([3, 4]);
    // The source was asked once per step, before the fork and never again.
    expect(indexesOf(source)).toEqual([0, 1, 2, 3, 4]);
    // The recorded working memory of step 3 is the fork's, sent after the conversation (the system message is the prefix).
    const messages = (server.requests.find((q) => q.session === fork)!.body as { messages: { role: string; content: string }[] }).messages;
    expect(messages.at(-1)!.role).toBe('system');
    expect(messages.at(-1)!.content).toContain('blue');
    expect(messages[0]!.content).not.toContain('blue');
  }, 120_000);

  it('at step 2 says the one step taken from the record as "step 1"', async () => {
    const fork = newSessionId('fork-two');
    server.registerScript(fork, { steps: [{ content: 'never asked' }, { content: 'Went on from step 2. HARNESS_OK' }] });
    const r = await cli([turnId, '--at-step', '2', '--session', fork]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.errLines[0]).toBe(`forked ${turnId} at step 2 into session ${fork}: step 1 taken from the record (1 model call not made)`);
  }, 120_000);

  it('--edit-message at step 1 asks the whole turn again with the new text', async () => {
    const fork = newSessionId('fork-msg');
    server.registerScript(fork, { steps: [{ expect: { last_message_contains: 'only say hello' }, content: 'Hello. HARNESS_OK' }] });
    const r = await cli([turnId, '--at-step', '1', '--edit-message', 'only say hello', '--session', fork]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toContain('Hello. HARNESS_OK');
    expect(indexesOf(fork)).toEqual([0]);
  }, 120_000);

  it('--model scripted:F answers from F\'s first step, not from the recorded call index', async () => {
    const script = writeScript(tempDir('harness-fork-model-'), {
      steps: [{ expect: { messages_contain: 'echo side' }, content: 'F answered from its first step. HARNESS_OK' }],
    });
    const r = await cli([turnId, '--at-step', '4', '--model', `scripted:${script}`, '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r)).toMatchObject({ terminated_by: 'final_answer', steps: 4, answer: 'F answered from its first step. HARNESS_OK' });
  }, 120_000);

  it('refuses a step the turn never reached, a bad step and a missing file in one line each', async () => {
    const far = await cli([turnId, '--at-step', '9']);
    expect(far.code).toBe(1);
    expect(far.errLines).toEqual([`error: turn ${turnId} has no step 9`, 'hint: it made model calls at steps 1–5: fork at one of them']);
    const zero = await cli([turnId, '--at-step', '0']);
    expect(zero.code).toBe(2);
    expect(zero.errLines[0]).toMatch(/step number/);
    const missing = await cli([turnId, '--at-step', '2', '--edit-system', '/nonexistent/system.txt']);
    expect(missing.code).toBe(2);
    expect(missing.errLines[0]).toBe('error: cannot read /nonexistent/system.txt');
    for (const x of [far, zero, missing]) expect(stackLines(x.stderr)).toEqual([]);
  }, 60_000);
});

describe('harness fork: the recorded turn\'s step limit', () => {
  // A turn run with `--max-steps 30` that took 24 steps (23 remember calls, then an answer).
  let longTurn: string;
  beforeAll(async () => {
    const long = newSessionId('fork-long');
    server.registerScript(long, {
      steps: [...Array.from({ length: 23 }, (_, i) => ({ tool_calls: [{ name: 'remember', arguments: { key: `k${i + 1}`, value: `v${i + 1}` } }] })), { content: 'Remembered 23 things.' }],
    });
    const out = await h.turn(long, endpointConfig(server.url, {}, DEFAULT_POLICY), 'remember 23 things', 30);
    expect(out).toMatchObject({ kind: 'done', result: { terminated_by: 'final_answer', steps: 24 } });
    longTurn = `${long}/turn-1`;
  }, 120_000);

  it('a fork past the default 20 steps goes on under the recorded limit', async () => {
    const fork = newSessionId('fork-limit');
    server.registerScript(fork, { steps: [...Array.from({ length: 21 }, () => ({ content: 'never asked' })), { expect: { messages_contain: 'k21' }, content: 'Went on at step 22. HARNESS_OK' }] });
    const r = await cli([longTurn, '--at-step', '22', '--session', fork, '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r)).toMatchObject({ terminated_by: 'final_answer', steps: 22, answer: 'Went on at step 22. HARNESS_OK' });
    expect(indexesOf(fork)).toEqual([21]);
  }, 120_000);

  it('--max-steps sets the limit, counted from the record: stopping on it is explained, one that leaves no step is refused', async () => {
    const fork = newSessionId('fork-max');
    server.registerScript(fork, { steps: [...Array.from({ length: 21 }, () => ({ content: 'never asked' })), { tool_calls: [{ name: 'remember', arguments: { key: 'more', value: 'yes' } }] }] });
    const r = await cli([longTurn, '--at-step', '22', '--max-steps', '22', '--session', fork]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.errLines.at(-1)).toBe(
      "note: the fork stopped at its step limit of 22, counted from the recorded turn's step 1 (it ran step 22 only); fork again with a higher --max-steps to go further",
    );
    const low = await cli([longTurn, '--at-step', '22', '--max-steps', '10']);
    expect(low.code).toBe(2);
    expect(low.errLines).toEqual([
      'error: --max-steps 10 leaves the fork no step: steps are numbered on from the record, and the fork starts at step 22',
      "hint: give --max-steps 22 or more (the recorded turn's limit was 30)",
    ]);
    expect(stackLines(low.stderr)).toEqual([]);
  }, 120_000);
});
