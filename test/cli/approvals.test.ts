/**
 * Approvals outlive the CLI process that started the turn: `run` without a TTY exits 3 and prints
 * the approve/deny commands, `status` shows what waits, and separate `approve` / `deny` processes
 * decide and print what `run` would have printed.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir, writeScript, type CliResult } from '../support/cli';

/** One write_file the default policy asks about, then a final answer that checks what the model saw. */
function writeScriptFor(callId: string, file: string, then: { expect: Record<string, string>; content: string }) {
  return {
    steps: [{ tool_calls: [{ id: `provider-${callId}`, name: 'write_file', arguments: { path: file, content: 'from the cli' } }] }, then],
  };
}

let h: TestHarness;
let dir: string;
let env: NodeJS.ProcessEnv;
const cli = (args: string[]) => runCli(args, { env, cwd: dir, timeoutMs: 90_000 });
const workspaceFile = (sessionId: string, file: string) => path.join(h.home, 'workspaces', sessionId, file);

/** `run --policy ask --json` of a script whose first step waits for approval; expects exit 3. */
async function runWaiting(sessionId: string, script: unknown): Promise<CliResult> {
  const file = writeScript(dir, script);
  const r = await cli(['run', '--model', `scripted:${file}`, '--policy', 'ask', 'write a file', '--json', '--session', sessionId]);
  expect(r.code, describeResult(r)).toBe(3);
  return r;
}

/** The shape of a user error: exit code, `error:` first, a `hint:` line, nothing on stdout, no stack. */
function expectUserError(r: CliResult, code: 1 | 2): void {
  const dump = describeResult(r);
  expect(r.code, dump).toBe(code);
  expect(r.stdout, dump).toBe('');
  expect(r.errLines[0], dump).toMatch(/^error: \S/);
  expect(r.errLines.filter((l) => l.startsWith('error:')), dump).toHaveLength(1);
  expect(r.errLines.some((l) => /^hint: \S/.test(l)), dump).toBe(true);
  expect(stackLines(r.stderr), dump).toEqual([]);
  expect(r.stderr, dump).not.toMatch(/unexpected error/);
}

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-cli-approvals-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home') });
});
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('approve from another process after `run` has exited', () => {
  const sessionId = newSessionId('cli-appr');
  // The harness's own id of the first call of step 1 of turn 1 (the script's id stays with the provider).
  const callId = 't1-s1-c0';
  let waiting = false;

  it('`run --json` without a TTY exits 3 with the pending approval and prints the approve and deny commands', async () => {
    const r = await runWaiting(
      sessionId,
      writeScriptFor(callId, 'cli-note.txt', { expect: { last_message_contains: '"ok":true' }, content: 'Wrote cli-note.txt. HARNESS_OK' }),
    );
    const out = parseJson<Record<string, unknown>>(r);
    expect(Object.keys(out).sort()).toEqual(['pending', 'session_id', 'status', 'workflow_id']);
    expect(out).toMatchObject({
      session_id: sessionId,
      workflow_id: `${sessionId}/turn-1`,
      status: 'waiting_for_approval',
      pending: {
        kind: 'approvals',
        calls: [{ call_id: callId, tool: 'write_file', args: { path: 'cli-note.txt', content: 'from the cli' }, risk: 'write', rule: 'mode ask' }],
      },
    });
    expect((out.pending as { calls: unknown[] }).calls).toHaveLength(1);
    expect(r.stderr).toContain(`harness approve ${sessionId} ${callId}`);
    expect(r.stderr).toContain(`harness deny ${sessionId} ${callId} --reason`);
    expect(stackLines(r.stderr)).toEqual([]);
    expect(existsSync(workspaceFile(sessionId, 'cli-note.txt'))).toBe(false);
    waiting = true;
  });

  it('`status` shows the session waiting for approval with the pending call', async () => {
    expect(waiting, 'the run must have left the approval pending').toBe(true);
    // The turn tells its session by signal; give the session a moment to record it.
    await expect
      .poll(
        async () => {
          const r = await cli(['status', sessionId, '--json']);
          return r.code === 0 ? parseJson<{ status: string }>(r).status : describeResult(r);
        },
        { timeout: 20_000, interval: 250 },
      )
      .toBe('waiting_for_approval');
    const r = await cli(['status', sessionId]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toContain(`session ${sessionId}: waiting_for_approval`);
    expect(r.stdout).toMatch(new RegExp(`^pending approval ${callId}: write_file {2}\\[risk write; rule mode ask: .*\\]\n {4}path: "cli-note\\.txt"\n {4}content: "from the cli"$`, 'm'));
  });

  it('`approve` of an unknown call id exits 1 with one error line saying it is not pending, and changes nothing', async () => {
    expect(waiting, 'the run must have left the approval pending').toBe(true);
    const r = await cli(['approve', sessionId, 'bogus-id']);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.errLines[0], describeResult(r)).toMatch(/^error: .*bogus-id is not pending/);
    const s = await cli(['status', sessionId, '--json']);
    expect(parseJson(s)).toMatchObject({ status: 'waiting_for_approval', pending: { kind: 'approvals', calls: [{ call_id: callId }] } });
    expect(existsSync(workspaceFile(sessionId, 'cli-note.txt'))).toBe(false);
    // Like every user error: a single error line, a hint, no stack.
    expectUserError(r, 1);
  });

  it('`approve <session> <callId> --json` from a separate process runs the call and prints the run result', async () => {
    expect(waiting, 'the run must have left the approval pending').toBe(true);
    const r = await cli(['approve', sessionId, callId, '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    const out = parseJson<Record<string, unknown>>(r);
    expect(out).toMatchObject({ session_id: sessionId, workflow_id: `${sessionId}/turn-1`, terminated_by: 'final_answer', steps: 2 });
    expect(out.answer).toBe('Wrote cli-note.txt. HARNESS_OK');
    expect((out.usage as { total_tokens: number }).total_tokens).toBeGreaterThan(0);
    expect(stackLines(r.stderr)).toEqual([]);
    expect(readFileSync(workspaceFile(sessionId, 'cli-note.txt'), 'utf8')).toBe('from the cli');
  });

  it('approving again once nothing is pending is a one-line error with a hint and exit 1', async () => {
    expect(waiting, 'the run must have left the approval pending').toBe(true);
    const r = await cli(['approve', sessionId, callId]);
    expectUserError(r, 1);
    expect(r.errLines[0]).toMatch(/no pending approval/);
  });
});

describe('deny from another process', () => {
  const sessionId = newSessionId('cli-deny');
  const callId = 't1-s1-c0';

  it('`deny` without --reason is a usage error (exit 2); with --reason the model sees APPROVAL_DENIED and the turn ends', async () => {
    await runWaiting(
      sessionId,
      writeScriptFor(callId, 'denied.txt', {
        expect: { last_message_contains: 'APPROVAL_DENIED', messages_contain: 'no writes' },
        content: 'Understood, not writing. HARNESS_OK',
      }),
    );

    const usage = await cli(['deny', sessionId, callId]);
    expectUserError(usage, 2);
    expect(usage.errLines[0]).toMatch(/--reason/);

    const r = await cli(['deny', sessionId, callId, '--reason', 'no writes', '--json']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(parseJson(r)).toMatchObject({
      session_id: sessionId,
      workflow_id: `${sessionId}/turn-1`,
      terminated_by: 'final_answer',
      answer: 'Understood, not writing. HARNESS_OK',
    });
    expect(stackLines(r.stderr)).toEqual([]);
    expect(existsSync(workspaceFile(sessionId, 'denied.txt'))).toBe(false);
  });
});

describe('approve --always', () => {
  const sessionId = newSessionId('cli-always');

  it('without a call id approves the one call `run` showed, printing every argument of it, grants it for the session and says so; the next such call runs unasked', async () => {
    const file = writeScript(dir, {
      steps: [
        { tool_calls: [{ name: 'write_file', arguments: { path: 'first.txt', content: 'one' } }] },
        { tool_calls: [{ name: 'write_file', arguments: { path: 'second.txt', content: 'two' } }] },
        { content: 'Both written. HARNESS_OK' },
      ],
    });
    const run = await cli(['run', '--model', `scripted:${file}`, '--session', sessionId, 'write two files']);
    expect(run.code, describeResult(run)).toBe(3);
    const r = await cli(['approve', sessionId, '--always']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.errLines.slice(0, 3)).toEqual([expect.stringMatching(/^approved t1-s1-c0: write_file {2}\[risk write; /), '    path: "first.txt"', '    content: "one"']);
    expect(r.errLines).toContain('granted for this session: every write_file call');
    expect(r.stdout).toContain('Both written. HARNESS_OK');
    expect(readFileSync(workspaceFile(sessionId, 'second.txt'), 'utf8')).toBe('two');
  });
});

describe('`harness sandbox doctor`', () => {
  it('exits 0 when Docker answers and the sandbox image is present', async () => {
    const r = await cli(['sandbox', 'doctor']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr).toMatch(/sandbox ready/);
    expect(r.stderr).not.toMatch(/missing:/);
  });
});
