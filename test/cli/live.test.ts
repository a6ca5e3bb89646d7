/**
 * Watching a turn from the CLI, as people do it, under the default policy: `run` on a terminal
 * (a pty under util-linux `script`) prints one line per step event; `status --follow` and
 * `trace --follow` attached from other processes print what happens after they attach; an inline
 * prompt closes, saying who decided, when another process approves first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSessionId, startHarness, type TestHarness } from '../support/harness';
import { cliEnv, describeResult, HARNESS_BIN, removeTempDirs, runCli, spawnCli, stopChild, tempDir, writeScript } from '../support/cli';
import { haveScript } from '../support/terminal';

let h: TestHarness;
let dir: string;
let env: NodeJS.ProcessEnv;

/** A script of four steps: a read-only call, a write the default policy asks about, a read, an answer. */
const STEPS = [
  { tool_calls: [{ name: 'get_current_time', arguments: {} }] },
  { tool_calls: [{ name: 'write_file', arguments: { path: 'poem.txt', content: 'roses' } }] },
  { tool_calls: [{ name: 'read_file', arguments: { path: 'poem.txt' } }] },
  { content: 'The poem is written.' },
];

/** Output as a person reads it: colours and carriage returns out. */
// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\u001b\[[0-9;]*m/g, '').replace(/\r/g, '');

/** `harness ...args` on a pty; `on(text, child)` sees the output so far each time it grows. */
function onTty(args: string[], on: (text: string, child: ChildProcess) => void, timeoutMs = 90_000): Promise<{ code: number | null; text: string }> {
  const command = [process.execPath, HARNESS_BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: dir, env: { ...env, SHELL: '/bin/sh' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.on('data', (d: Buffer) => {
    text += d.toString('utf8');
    on(plain(text), child);
  });
  child.stdin.on('error', () => undefined);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, text: plain(text) });
    }),
  );
}

/** Output of a long-running CLI process, read as it comes. */
function watch(child: ChildProcess): { text: () => string; until: (re: RegExp, ms?: number) => Promise<void> } {
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return {
    text: () => out,
    until: async (re, ms = 30_000) => {
      const deadline = Date.now() + ms;
      while (!re.test(out)) {
        if (Date.now() > deadline) throw new Error(`no ${re} in:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

beforeAll(async () => {
  expect(haveScript(), 'util-linux `script` is needed for the terminal tests').toBe(true);
  h = await startHarness();
  dir = tempDir('harness-cli-live-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home') });
}, 120_000);
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('live lines', () => {
  it('run on a terminal prints each step as it happens: model calls with tokens, tool calls with decision, rule and outcome', async () => {
    const script = writeScript(dir, { steps: STEPS });
    let answered = false;
    const r = await onTty(['run', '--model', `scripted:${script}`, 'write a poem'], (text, child) => {
      if (!answered && /\[y\]es/.test(text)) {
        answered = true;
        child.stdin!.write('y\n');
      }
    });
    expect(r.code, r.text).toBe(0);
    expect(r.text).toMatch(/step 1 · model scripted · \d+ tokens \(\d+\+\d+\) · \d+ ms → get_current_time/);
    expect(r.text).toMatch(/step 1 · get_current_time \{\} · allow \(allow-read-only-tools\) · ok \d+ ms/);
    expect(r.text).toMatch(/step 2 · write_file poem\.txt · ask \(mode ask\) · approved by harness-cli \S+ · ok/);
    expect(r.text).toMatch(/step 3 · read_file poem\.txt · (.* · )?ok/);
    expect(r.text).toMatch(/step 4 · model scripted · \d+ tokens .*→ answer The poem is written\./);
    // In order, each once, before the result.
    const order = ['step 1 · model', 'step 1 · get_current_time', 'step 2 · model', 'step 2 · write_file', 'step 3 · model', 'step 3 · read_file', 'step 4 · model', 'final_answer after 4 steps'];
    const at = order.map((l) => r.text.indexOf(l));
    expect(at.every((i) => i >= 0), r.text).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    for (const l of order) expect(r.text.split(l).length - 1, l).toBe(1);
    expect(r.text).not.toMatch(/… step \d/);
  });

  it('--json prints only the result, as before', async () => {
    const script = writeScript(dir, { steps: [STEPS[0], STEPS[3]] });
    const r = await runCli(['run', '--model', `scripted:${script}`, 'what time is it', '--json'], { env, cwd: dir });
    expect(r.code, describeResult(r)).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ terminated_by: 'final_answer', steps: 2 });
    expect(r.stderr).toBe('');
  });
});

describe('attached from other processes', () => {
  it('status --follow and trace --follow print what happens after they attach, until the turn ends', async () => {
    const sessionId = newSessionId('cli-follow');
    const script = writeScript(dir, { steps: STEPS });
    const first = await runCli(['run', '--model', `scripted:${script}`, '--session', sessionId, 'write a poem'], { env, cwd: dir });
    expect(first.code, describeResult(first)).toBe(3);
    const children = [spawnCli(['status', sessionId, '--follow'], { env, cwd: dir }), spawnCli(['trace', sessionId, '--follow'], { env, cwd: dir })];
    const [status, trace] = children.map(watch) as [ReturnType<typeof watch>, ReturnType<typeof watch>];
    const followers = [status, trace];
    try {
      await status.until(/following /);
      await trace.until(/following /);
      // What came before: status says where the turn is; the trace printed its story so far.
      expect(status.text()).toMatch(/step 2 · waiting for approval of write_file/);
      expect(trace.text()).toMatch(/approval pending/);
      const approved = await runCli(['approve', sessionId, '--no-wait'], { env, cwd: dir });
      expect(approved.code, describeResult(approved)).toBe(0);
      for (const f of followers) await f.until(/turn \S+\/turn-1 final_answer · 4 step\(s\)/);
      for (const f of followers) {
        const t = f.text();
        expect(t).toMatch(/write_file approved by harness-cli/);
        expect(t).toMatch(/step 2 · write_file poem\.txt · ask \(mode ask\) · approved by harness-cli \S+ · ok/);
        expect(t).toMatch(/step 3 · read_file poem\.txt · (.* · )?ok/);
        expect(t).toMatch(/step 4 · model scripted .*→ answer The poem is written\./);
        // The turn's end is the last line, though steps 3 and 4 end in the same workflow task.
        expect(t.search(/step 4 · model scripted/)).toBeLessThan(t.search(/turn \S+\/turn-1 final_answer/));
        // Steps that ended before it attached are not printed again as events.
        expect(t).not.toMatch(/step 1 · get_current_time \{\} ·/);
      }
    } finally {
      // They follow the session until it ends: stopped like Ctrl-C.
      await Promise.all(children.map((c) => stopChild(c, 'SIGINT')));
    }
  });
});

describe('the inline prompt', () => {
  it('closes with who decided when another process approves first, and the run goes on to its answer', async () => {
    const sessionId = newSessionId('cli-stale');
    const script = writeScript(dir, { steps: STEPS });
    let approving: Promise<unknown> | undefined;
    const r = await onTty(['run', '--model', `scripted:${script}`, '--session', sessionId, 'write a poem'], (text) => {
      if (!approving && /\[y\]es/.test(text)) approving = runCli(['approve', sessionId, '--no-wait'], { env, cwd: dir });
    });
    const other = (await approving) as { code: number };
    expect(other.code).toBe(0);
    expect(r.code, r.text).toBe(0);
    expect(r.text).toMatch(/prompt closed: t1-s2-c0 write_file was approved elsewhere by harness-cli \S+ at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ/);
    expect(r.text).toContain('The poem is written.');
    expect(r.text).toMatch(/final_answer after 4 steps/);
  });
});
