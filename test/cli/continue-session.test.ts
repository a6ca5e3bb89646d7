/**
 * `harness run --session ID` on an existing session: the session's configuration was fixed
 * when it started, so the next turn must not need the model named again.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, tempDir, writeScript } from '../support/cli';

let h: TestHarness;
let dir: string;
let env: NodeJS.ProcessEnv;
const cli = (args: string[]) => runCli(args, { env, cwd: dir, timeoutMs: 60_000 });

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-cli-continue-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home') });
});
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('continuing a session from the CLI', () => {
  it('`run --session ID` without --model continues with the model the session started with', async () => {
    const sessionId = newSessionId('cli-continue');
    const script = writeScript(dir, {
      steps: [
        { content: 'First turn done.' },
        { expect: { last_message_contains: 'second task' }, content: 'Second turn done. HARNESS_OK' },
      ],
    });
    const first = await cli(['run', '--model', `scripted:${script}`, 'first task', '--json', '--session', sessionId]);
    expect(first.code, describeResult(first)).toBe(0);
    expect(parseJson(first)).toMatchObject({ workflow_id: `${sessionId}/turn-1`, answer: 'First turn done.' });

    const second = await cli(['run', 'second task', '--json', '--session', sessionId]);
    expect(second.code, describeResult(second)).toBe(0);
    expect(parseJson(second)).toMatchObject({
      session_id: sessionId,
      workflow_id: `${sessionId}/turn-2`,
      terminated_by: 'final_answer',
      answer: 'Second turn done. HARNESS_OK',
    });
  });
});
