/**
 * Typing while a turn runs in `harness chat` at a terminal (a pseudo-terminal, util-linux
 * `script`), under the default policy: the line goes to the running turn, queued for its next
 * step, and the chat says so; the model's next request has it, and the chat goes on to its next
 * prompt. Piped input is not steering: its lines wait for their prompts, as before.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { cliEnv, removeTempDirs, tempDir, writeScript } from '../support/cli';
import { runPiped, runTty } from '../support/terminal';

let h: TestHarness;
let dir: string;
let env: NodeJS.ProcessEnv;
let script: string;

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-chat-steer-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home'), DATABASE_URL: TEST_DATABASE_URL, TERM: 'dumb' });
  // The wait tool is read-only: the default policy runs it unasked, and it gives the person time to type.
  script = writeScript(dir, {
    steps: [
      { tool_calls: [{ name: 'wait', arguments: { seconds: 5, reason: 'the build runs' } }] },
      { expect: { messages_contain: 'also run the linter' }, content: 'Deployed, and linted. DONE' },
      { content: 'Nothing was steered. DONE' },
    ],
  });
}, 120_000);
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('typing while a turn runs in chat', () => {
  it('queues the line for the running turn, which reads it at its next step', async () => {
    const r = await runTty(['chat', '--model', `scripted:${script}`], {
      env,
      cwd: dir,
      replies: [
        { after: /you> $/, send: 'deploy\r' },
        { after: /sleeping/, send: 'also run the linter\r' },
        { after: /you> $/, send: '/exit\r' },
      ],
      timeoutMs: 120_000,
    });
    expect(r.text).toContain('type while a turn runs to steer it');
    expect(r.text).toMatch(/queued for \S+\/turn-1: the model reads it at its next step/);
    expect(r.text).toContain('Deployed, and linted. DONE');
    expect(r.code).toBe(0);
  }, 150_000);

  it('leaves piped lines for their prompts', async () => {
    const piped = writeScript(dir, {
      steps: [
        { tool_calls: [{ name: 'wait', arguments: { seconds: 1, reason: 'a moment' } }] },
        { content: 'First done. DONE' },
        { expect: { last_message_contains: 'second message' }, content: 'Second done. DONE' },
      ],
    });
    const r = await runPiped(['chat', '--model', `scripted:${piped}`], { env, cwd: dir, input: 'first message\nsecond message\n/exit\n', timeoutMs: 120_000 });
    expect(r.text).not.toContain('queued for');
    expect(r.text).toContain('First done. DONE');
    expect(r.text).toContain('Second done. DONE');
    expect(r.code).toBe(0);
  }, 150_000);
});
