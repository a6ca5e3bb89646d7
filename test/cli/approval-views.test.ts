/**
 * Every view of a call waiting for approval shows every argument of it, under the default policy:
 * `run` leaving it pending, the `run` prompt on a terminal, `status`, `show`, and what `approve`
 * and `deny` print. A call `{command, host, env}` is shown with its host and its environment, not
 * as its command alone; a 5,000-character file content is shown by its size and the `harness
 * show` command, which prints it whole.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSessionId, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir, writeScript } from '../support/cli';
import { haveScript, runTty } from '../support/terminal';
import { OPS_ARGS, opsExecTool } from '../support/ops-tool';

const received: unknown[] = [];
let h: TestHarness;
let dir: string;
let env: NodeJS.ProcessEnv;
const cli = (args: string[]) => runCli(args, { env, cwd: dir, timeoutMs: 90_000 });

/** The lines that show the host and the environment of OPS_ARGS. */
const HOST = 'host: "prod-db-1"';
const ENV = 'env: {"LD_PRELOAD":"/tmp/evil.so"}';

function opsCall(args: Record<string, unknown> = OPS_ARGS) {
  return { tool_calls: [{ name: 'ops_exec', arguments: args }] };
}

/** Polls `status --json` until the session waits for approval of `callId`. */
async function pendingCall(sessionId: string, callId: string): Promise<void> {
  await expect
    .poll(
      async () => {
        const r = await cli(['status', sessionId, '--json']);
        const s = r.code === 0 ? parseJson<{ pending?: { calls?: { call_id: string }[] } }>(r) : undefined;
        return s?.pending?.calls?.map((c) => c.call_id).join(',') ?? describeResult(r);
      },
      { timeout: 30_000, interval: 300 },
    )
    .toBe(callId);
}

beforeAll(async () => {
  h = await startHarness({ tools: [opsExecTool(received)] });
  dir = tempDir('harness-cli-views-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home'), DATABASE_URL: TEST_DATABASE_URL });
}, 120_000);
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('a call with a command, a host and an environment', () => {
  const sessionId = newSessionId('views');

  it('`run` leaving it pending, `status`, `show` and `approve` show the host and the environment, not the command alone', async () => {
    const script = writeScript(dir, { steps: [opsCall(), opsCall({ ...OPS_ARGS, command: 'id' }), { content: 'checked the fleet' }] });
    const run = await cli(['run', '--model', `scripted:${script}`, '--session', sessionId, 'check the fleet']);
    expect(run.code, describeResult(run)).toBe(3);
    expect(run.stderr).toMatch(/^ {2}t1-s1-c0: ops_exec uptime {2}\[risk dangerous; /m);
    expect(run.stderr).toContain(`      ${HOST}\n`);
    expect(run.stderr).toContain(`      ${ENV}\n`);

    await pendingCall(sessionId, 't1-s1-c0');
    const status = await cli(['status', sessionId]);
    expect(status.code, describeResult(status)).toBe(0);
    expect(status.stdout).toMatch(/^pending approval t1-s1-c0: ops_exec uptime {2}\[risk dangerous; /m);
    expect(status.stdout).toContain(`    ${HOST}\n`);
    expect(status.stdout).toContain(`    ${ENV}\n`);

    const show = await cli(['show', sessionId, 't1-s1-c0']);
    expect(show.code, describeResult(show)).toBe(0);
    expect(show.stdout).toMatch(/^call t1-s1-c0 of session \S+: ops_exec\nstate: waiting for approval\n/);
    expect(show.stdout).toMatch(/^digest: [0-9a-f]{32}$/m);
    for (const l of ['command: "uptime"', HOST, ENV]) expect(show.stdout.split('\n')).toContain(l);
    const shown = parseJson<{ args: unknown; pending: boolean; digest: string }>(await cli(['show', sessionId, 't1-s1-c0', '--json']));
    expect(shown).toMatchObject({ args: OPS_ARGS, pending: true });

    const approve = await cli(['approve', sessionId, '--no-wait']);
    expect(approve.code, describeResult(approve)).toBe(0);
    expect(approve.stderr).toMatch(/^approved t1-s1-c0: ops_exec uptime {2}\[risk dangerous; /m);
    expect(approve.stderr).toContain(`    ${HOST}\n`);
    expect(approve.stderr).toContain(`    ${ENV}\n`);
    // What ran is what was shown.
    await expect.poll(() => received.length, { timeout: 30_000 }).toBe(1);
    expect(received[0]).toEqual(OPS_ARGS);
  });

  it('`deny` prints every argument of what it denied', async () => {
    await pendingCall(sessionId, 't1-s2-c0');
    const deny = await cli(['deny', sessionId, 't1-s2-c0', '--reason', 'not on production']);
    expect(deny.code, describeResult(deny)).toBe(0);
    expect(deny.stderr).toMatch(/^denied t1-s2-c0: ops_exec id {2}\[risk dangerous; /m);
    expect(deny.stderr).toContain(`    ${HOST}\n`);
    expect(deny.stderr).toContain(`    ${ENV}\n`);
    expect(deny.stdout).toBe('checked the fleet\n');
    expect(received).toHaveLength(1);
    expect(stackLines(deny.stderr)).toEqual([]);
  });

  it('the prompt of `run` on a terminal shows the host and the environment before it asks', async () => {
    expect(haveScript(), 'util-linux `script` gives the CLI a terminal').toBe(true);
    const script = writeScript(dir, { steps: [opsCall(), { content: 'done on the terminal' }] });
    const r = await runTty(['run', '--model', `scripted:${script}`, '--session', newSessionId('views-tty'), 'check it'], {
      env: { ...env, TERM: 'dumb', HARNESS_LIVE: '0' },
      cwd: dir,
      replies: [{ after: /for this session > $/, send: 'y\r' }],
      timeoutMs: 90_000,
    });
    expect(r.code, r.text).toBe(0);
    const prompt = r.text.slice(0, r.text.indexOf('for this session >'));
    expect(prompt).toMatch(/approve t1-s1-c0: ops_exec uptime {2}\[risk dangerous; /);
    expect(prompt).toContain(HOST);
    expect(prompt).toContain(ENV);
    expect(r.text).toContain('done on the terminal');
  });
});

describe('a long file content', () => {
  const sessionId = newSessionId('views-long');
  // 50 lines of 99 characters and a line end: 5,000 characters.
  const content = Array.from({ length: 50 }, (_, i) => `${String(i).padStart(2, '0')} ${'x'.repeat(96)}\n`).join('');

  it('is shown by its size and the `harness show` command, which prints it whole', async () => {
    expect(content).toHaveLength(5000);
    const script = writeScript(dir, { steps: [{ tool_calls: [{ name: 'write_file', arguments: { path: 'big.txt', content } }] }, { content: 'wrote it' }] });
    const run = await cli(['run', '--model', `scripted:${script}`, '--session', sessionId, 'write a big file']);
    expect(run.code, describeResult(run)).toBe(3);
    const hint = `(5000 bytes; in full: harness show ${sessionId} t1-s1-c0)`;
    expect(run.stderr).toContain(hint);
    expect(run.stderr).toContain('path: "big.txt"');

    await pendingCall(sessionId, 't1-s1-c0');
    const status = await cli(['status', sessionId]);
    expect(status.stdout.split('\n')).toContain(`    content: "00 ${'x'.repeat(96)}\\n01 ${'x'.repeat(17)}"…  ${hint}`);

    const show = await cli(['show', sessionId, 't1-s1-c0']);
    expect(show.code, describeResult(show)).toBe(0);
    const lines = show.stdout.split('\n');
    const at = lines.indexOf('content: 5000 characters, 5000 bytes, 51 line(s):');
    expect(at, show.stdout).toBeGreaterThan(0);
    const body = lines.slice(at + 1, at + 52);
    expect(body.every((l) => l.startsWith('  | '))).toBe(true);
    expect(body.map((l) => l.slice(4)).join('\n')).toBe(content);
    const json = parseJson<{ args: { path: string; content: string } }>(await cli(['show', sessionId, 't1-s1-c0', '--json']));
    expect(json.args).toEqual({ path: 'big.txt', content });
  });

  it('`show` of a call the session does not have is one error line with a hint', async () => {
    const r = await cli(['show', sessionId, 't1-s9-c0']);
    expect(r.code, describeResult(r)).toBe(1);
    expect(r.errLines[0]).toBe(`error: session ${sessionId} has no call t1-s9-c0`);
    expect(r.errLines[1]).toMatch(/^hint: /);
  });
});
