/**
 * A scripted-model file larger than a session can carry (scripted-model/script.ts MAX_SCRIPT_BYTES,
 * 1 MiB) is refused by every command that takes one, in one line with its size and the limit,
 * exit 2, before anything starts; one just under the limit runs (the limit fits in the session's
 * start input). Real CLI processes against a real worker, under the default policy.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SCRIPT_BYTES } from '../../scripted-model/script';
import { startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, removeTempDirs, runCli, stackLines, tempDir } from '../support/cli';

let h: TestHarness;
let env: NodeJS.ProcessEnv;
let dir: string;
let big: string;

/** A script file of one step answering `text`, padded with spaces to exactly `bytes`. */
function scriptOf(name: string, text: string, bytes: number): string {
  const json = JSON.stringify({ steps: [{ content: text }] });
  const file = path.join(dir, name);
  writeFileSync(file, json + ' '.repeat(bytes - json.length));
  return file;
}

beforeAll(async () => {
  h = await startHarness();
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: h.home });
  dir = tempDir('harness-cli-script-size-');
  // 3 MB: past Temporal's payload limit too, where a session carrying it could not start.
  big = scriptOf('big.json', 'x'.repeat(3_000_000), 3_000_100);
}, 60_000);
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('a scripted-model file over the limit', () => {
  it.each([
    ['run', () => ['run', '--model', `scripted:${big}`, 'hello']],
    ['chat', () => ['chat', '--model', `scripted:${big}`]],
    ['eval', () => ['eval', '--model', `scripted:${big}`, path.join(dir, 'suite.jsonl')]],
    ['model serve', () => ['model', 'serve', '--script', big, '--port', '0']],
  ])('is refused by %s in one line with its size and the limit, exit 2', async (_command, args) => {
    writeFileSync(path.join(dir, 'suite.jsonl'), `${JSON.stringify({ id: 'a', input: 'hi', checks: [{ type: 'contains', value: 'x' }] })}\n`);
    const r = await runCli(args(), { env, timeoutMs: 30_000 });
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.errLines[0]).toBe(
      `error: ${big}: the script is 3000100 bytes; a script may be at most ${MAX_SCRIPT_BYTES} bytes (1 MiB: it travels in the session's start input, which Temporal caps at 2 MB)`,
    );
    expect(r.errLines[1]).toMatch(/^hint: /);
    expect(stackLines(r.stderr)).toEqual([]);
    expect(r.stdout).toBe('');
  });

  it('one just under the limit runs to its answer', async () => {
    const answer = `FITS ${'y'.repeat(MAX_SCRIPT_BYTES - 2_000)}`;
    const fits = scriptOf('fits.json', answer, MAX_SCRIPT_BYTES);
    const r = await runCli(['run', '--model', `scripted:${fits}`, 'hello', '--json'], { env, timeoutMs: 60_000 });
    expect(r.code, describeResult(r)).toBe(0);
    expect((JSON.parse(r.stdout) as { answer: string }).answer).toBe(answer);
  }, 90_000);
});
