/**
 * `approve <session>` without call ids decides only a call its user was shown as it is now.
 * Person A looks at a pending call; person B denies it; the model asks for something else; A's
 * `approve <session>` must not approve that unseen call: without a terminal it is refused (exit 2,
 * naming the call and the command), on a terminal it shows the call and asks. Several pending
 * calls are never decided without naming them. People are separate HARNESS_HOMEs, as separate
 * users are; everything runs under the default policy.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSessionId, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, stackLines, tempDir, writeScript } from '../support/cli';
import { haveScript, runTty } from '../support/terminal';

let h: TestHarness;
let dir: string;
/** Who started the session, and the two approvers. */
const envs: Record<'starter' | 'a' | 'b', NodeJS.ProcessEnv> = { starter: {}, a: {}, b: {} };
const as = (who: keyof typeof envs, args: string[]) => runCli(args, { env: envs[who], cwd: dir, timeoutMs: 90_000 });
const workspaceFile = (sessionId: string, file: string) => path.join(h.home, 'workspaces', sessionId, file);

function write(file: string) {
  return { name: 'write_file', arguments: { path: file, content: `${file} contents` } };
}

/** The pending call ids, as the starter's `status --json` says (the starter's views decide nothing here). */
async function pendingIds(sessionId: string): Promise<string> {
  const r = await as('starter', ['status', sessionId, '--json']);
  const s = r.code === 0 ? parseJson<{ pending?: { calls?: { call_id: string }[] } }>(r) : undefined;
  return s?.pending?.calls?.map((c) => c.call_id).join(',') ?? describeResult(r);
}

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-cli-race-');
  for (const who of Object.keys(envs) as (keyof typeof envs)[]) {
    envs[who] = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, `home-${who}`), DATABASE_URL: TEST_DATABASE_URL });
  }
}, 120_000);
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('two approvers', () => {
  const sessionId = newSessionId('race');

  it("A's `approve <session>` after B denied what A saw and the model asked again is refused without a terminal, deciding nothing", async () => {
    const script = writeScript(dir, {
      steps: [
        { tool_calls: [write('seen.txt')] },
        { expect: { last_message_contains: 'APPROVAL_DENIED' }, tool_calls: [write('unseen.txt')] },
        { content: 'done after the race' },
      ],
    });
    const started = await as('starter', ['run', '--model', `scripted:${script}`, '--session', sessionId, 'write files']);
    expect(started.code, describeResult(started)).toBe(3);
    await expect.poll(() => pendingIds(sessionId), { timeout: 30_000, interval: 300 }).toBe('t1-s1-c0');

    // A looks; B denies what A looked at; the model asks for another call.
    const looked = await as('a', ['status', sessionId]);
    expect(looked.stdout).toContain('seen.txt');
    const denied = await as('b', ['deny', sessionId, 't1-s1-c0', '--reason', 'not that file', '--no-wait']);
    expect(denied.code, describeResult(denied)).toBe(0);
    await expect.poll(() => pendingIds(sessionId), { timeout: 30_000, interval: 300 }).toBe('t1-s2-c0');

    const r = await as('a', ['approve', sessionId]);
    expect(r.code, describeResult(r)).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.errLines[0]).toBe(`error: nothing was decided: pending in session ${sessionId}: t1-s2-c0 (write_file); it is not the call you were last shown`);
    expect(r.errLines[1]).toContain(`harness approve ${sessionId} t1-s2-c0`);
    expect(r.errLines).toHaveLength(2);
    expect(stackLines(r.stderr)).toEqual([]);
    // `deny` takes no less care.
    const deny = await as('a', ['deny', sessionId, '--reason', 'no']);
    expect(deny.code, describeResult(deny)).toBe(2);
    expect(deny.errLines[1]).toContain(`harness deny ${sessionId} t1-s2-c0 --reason`);

    expect(await pendingIds(sessionId)).toBe('t1-s2-c0');
    expect(existsSync(workspaceFile(sessionId, 'unseen.txt'))).toBe(false);
  });

  it('on a terminal, A is shown the new call whole and asked; approved there, it runs', async () => {
    expect(haveScript(), 'util-linux `script` gives the CLI a terminal').toBe(true);
    const r = await runTty(['approve', sessionId], {
      env: { ...envs.a, TERM: 'dumb', HARNESS_LIVE: '0' },
      cwd: dir,
      replies: [{ after: /approve t1-s2-c0 as shown above\? \[y\]es \/ \[n\]o\r?\n> $/, send: 'y\r' }],
      timeoutMs: 90_000,
    });
    expect(r.code, r.text).toBe(0);
    const asked = r.text.slice(0, r.text.indexOf('as shown above?'));
    expect(asked).toMatch(/pending t1-s2-c0: write_file {2}\[risk write; /);
    expect(asked).toContain('path: "unseen.txt"');
    expect(asked).toContain('content: "unseen.txt contents"');
    expect(r.text).toMatch(/approved t1-s2-c0: write_file/);
    expect(r.text).toContain('done after the race');
    expect(existsSync(workspaceFile(sessionId, 'unseen.txt'))).toBe(true);
    expect(existsSync(workspaceFile(sessionId, 'seen.txt'))).toBe(false);
  });
});

describe('several pending calls', () => {
  const sessionId = newSessionId('race-two');

  it('are never approved without naming them, even once shown; named by id and by digest, both are', async () => {
    const script = writeScript(dir, { steps: [{ tool_calls: [write('one.txt'), write('two.txt')] }, { content: 'both written' }] });
    const run = await as('a', ['run', '--model', `scripted:${script}`, '--session', sessionId, 'write two files']);
    expect(run.code, describeResult(run)).toBe(3);
    await expect.poll(() => pendingIds(sessionId), { timeout: 30_000, interval: 300 }).toBe('t1-s1-c0,t1-s1-c1');

    const all = await as('a', ['approve', sessionId]);
    expect(all.code, describeResult(all)).toBe(2);
    expect(all.errLines[0]).toBe(`error: nothing was decided: pending in session ${sessionId}: t1-s1-c0 (write_file), t1-s1-c1 (write_file); 2 calls are pending; say which`);
    expect(all.errLines[1]).toContain(`harness approve ${sessionId} t1-s1-c0 t1-s1-c1`);
    expect(existsSync(workspaceFile(sessionId, 'one.txt'))).toBe(false);

    const second = parseJson<{ digest: string }>(await as('a', ['show', sessionId, 't1-s1-c1', '--json']));
    expect(second.digest).toMatch(/^[0-9a-f]{32}$/);
    const r = await as('a', ['approve', sessionId, 't1-s1-c0', second.digest]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr).toMatch(/^approved t1-s1-c0: write_file/m);
    expect(r.stderr).toMatch(/^approved t1-s1-c1: write_file/m);
    expect(r.stdout).toContain('both written');
    expect(existsSync(workspaceFile(sessionId, 'two.txt'))).toBe(true);
  });
});
