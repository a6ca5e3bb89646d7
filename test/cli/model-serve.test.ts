/**
 * `harness model serve`: the scripted model as a standalone OpenAI-compatible endpoint that
 * the real `openai` client can talk to; SIGTERM ends it cleanly, a bad script is a usage error.
 */
import type { ChildProcess } from 'node:child_process';
import OpenAI from 'openai';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cliEnv, describeResult, removeTempDirs, runCli, spawnCli, stackLines, stopChild, tempDir, writeScript } from '../support/cli';

const children: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => stopChild(c, 'SIGKILL')));
});
afterAll(() => removeTempDirs());

/** Resolves with stdout's first line, or rejects with everything the process said if it exits first. */
function firstStdoutLine(child: ChildProcess, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no stdout line within ${timeoutMs} ms\nstdout: ${out}\nstderr: ${err}`)), timeoutMs);
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        resolve(out.slice(0, nl).trim());
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before printing a URL\nstdout: ${out}\nstderr: ${err}`));
    });
  });
}

describe('harness model serve', () => {
  it('serves the script to an openai client on the printed base URL and exits 0 on SIGTERM', async () => {
    const dir = tempDir('harness-cli-serve-');
    const script = writeScript(dir, {
      steps: [
        { content: 'Hello from the script. HARNESS_OK' },
        { expect: { last_message_contains: 'list them' }, tool_calls: [{ name: 'list_files', arguments: { path: '.' } }] },
      ],
    });
    const child = spawnCli(['model', 'serve', '--script', script, '--port', '0'], { env: cliEnv({}), cwd: dir });
    children.push(child);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );

    const baseURL = await firstStdoutLine(child);
    expect(baseURL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(baseURL).not.toMatch(/:0\//);

    const openai = new OpenAI({ baseURL, apiKey: 'x', maxRetries: 0 });
    const first = await openai.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'hello' }] });
    expect(first.choices[0]!.message.content).toBe('Hello from the script. HARNESS_OK');
    expect(first.usage?.total_tokens).toBeGreaterThan(0);

    const second = await openai.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'list them' }] });
    const call = second.choices[0]!.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') return;
    expect(call.function.name).toBe('list_files');
    expect(JSON.parse(call.function.arguments)).toEqual({ path: '.' });

    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: 0, signal: null });
  });

  it('rejects a bad script file with exit 2 and one error line', async () => {
    const dir = tempDir('harness-cli-serve-');
    const script = writeScript(dir, { steps: [{ contnt: 'typo' }] }, 'bad.json');
    const r = await runCli(['model', 'serve', '--script', script, '--port', '0'], { env: cliEnv({}), cwd: dir, timeoutMs: 30_000 });
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.stdout).toBe('');
    const errors = r.errLines.filter((l) => !l.startsWith('hint: '));
    expect(errors, describeResult(r)).toHaveLength(1);
    expect(errors[0]).toMatch(/^error: /);
    expect(errors[0]).toContain('bad.json');
    expect(stackLines(r.stderr)).toEqual([]);
  });

  it('rejects a missing script file with exit 2 and one error line', async () => {
    const dir = tempDir('harness-cli-serve-');
    const r = await runCli(['model', 'serve', '--script', 'nope.json', '--port', '0'], { env: cliEnv({}), cwd: dir, timeoutMs: 30_000 });
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.errLines[0]).toMatch(/^error: .*nope\.json/);
    expect(r.errLines.filter((l) => !l.startsWith('hint: '))).toHaveLength(1);
    expect(stackLines(r.stderr)).toEqual([]);
  });
});
