/**
 * Nothing a model, a tool, a server or a file wrote reaches the terminal as a control sequence.
 * A scripted model whose every reply is full of escape sequences (clear
 * screen, window title, clipboard, links, BEL, every C1 control, CR, backspace, bidi overrides)
 * drives real sessions under the default policy, and every command that shows that text is run
 * through pipes and on a pseudo-terminal: no raw ESC, BEL or C1 character comes out, the text is
 * still there (escaped, visible), and `--json` output parses back to exactly what the model said.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newSessionId, startHarness, TEST_DATABASE_URL, type TestHarness } from '../support/harness';
import { setTimeout as sleep } from 'node:timers/promises';
import { cliEnv, removeTempDirs, spawnCli, stopChild, tempDir, writeScript } from '../support/cli';
import { haveScript, rawControls, runPiped, runTty, type Reply, type TerminalOptions, type TerminalResult } from '../support/terminal';

/** Every C1 control: a terminal that reads 8-bit controls takes U+009B as CSI and U+009D as OSC. */
const C1 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)).join('');
/** What a hostile reply holds; `pwned` words stay visible once escaped, so we can see it was shown. */
const EVIL =
  'A\u001b[2J\u001b[H' + // clear the screen, cursor home
  'B\u001b]0;pwned-title\u0007' + // window title
  'C\u001b]52;c;cHduZWQ=\u0007' + // write the clipboard
  'D\u001b]8;;https://evil.example/\u001b\\pwned-link\u001b]8;;\u001b\\' + // a hyperlink
  'E\u0007\u0007' + // bells
  `F${C1}` +
  'G\u009b2J\u009d0;pwned-c1\u009c' + // CSI and OSC as C1 characters
  'H\r\b\bI\u202eJ\u2066K\u200bL\tM\nN'; // overwrite, back up, reorder, hide
/** A short one, where a field is bounded (a memory key). */
const EVIL_KEY = 'key\u001b]0;pwned-key\u0007\u009b';
/** What the visible (escaped) text must still show. */
const SHOWN = 'pwned-title';

let h: TestHarness;
let dir: string;
let env: NodeJS.ProcessEnv;
const SOURCE = newSessionId('evil');
const FAILING = newSessionId('evil-fail');
let evilScript: string;
let askScript: string;
let failScript: string;
let evilSuite: string;

/** A write_file (the default policy asks), an ask_user, then an answer: what `chat` and a TTY `run` meet. */
const askAnswer = { steps: [call('write_file', { path: 'asked.txt', content: EVIL }), call('ask_user', { question: EVIL }), { content: EVIL }] };

function call(name: string, args: Record<string, unknown>) {
  return { tool_calls: [{ name, arguments: args }] };
}

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-cli-terminal-');
  env = cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: h.taskQueue, HARNESS_HOME: path.join(dir, 'home'), DATABASE_URL: TEST_DATABASE_URL, TERM: 'dumb' });
  evilScript = writeScript(dir, {
    steps: [
      call('remember', { key: EVIL_KEY, value: EVIL }), // 1: working memory (status)
      call('read_file', { path: 'seed.txt' }), // 2: a file's text as a tool result (trace --full, rerun)
      call('write_file', { path: 'evil.txt', content: EVIL }), // 3: asks; approved
      call('ask_user', { question: EVIL }), // 4: a question
      call('write_file', { path: 'denied.txt', content: EVIL }), // 5: asks; denied
      call('read_file', { path: 'evil.txt' }), // 6
      { content: EVIL }, // 7: the answer (a fork from step 7 asks for it again)
      call('finish', { answer: EVIL }), // turn 2: the answer through `finish`
    ],
  });
  askScript = writeScript(dir, askAnswer);
  // An expectation that cannot be met: the model call fails for good, and its message quotes it.
  failScript = writeScript(dir, { steps: [{ expect: { last_message_contains: EVIL }, content: 'never' }] });
  // A file name is text from outside too.
  evilSuite = path.join(dir, `suite-\u001b]0;pwned-title\u0007\u009b.jsonl`);
  writeFileSync(evilSuite, `${JSON.stringify({ id: 'evil', input: 'Say it.', model_script: { steps: [{ content: EVIL }] }, checks: [{ type: 'contains', value: 'absent' }] })}\n`);
  const ws = path.join(h.home, 'workspaces', SOURCE);
  mkdirSync(ws, { recursive: true });
  writeFileSync(path.join(ws, 'seed.txt'), `${EVIL} v1`);
}, 120_000);
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

const piped = (args: string[], o: Partial<TerminalOptions> = {}) => runPiped(args, { env, cwd: dir, ...o });
const tty = (args: string[], o: Partial<TerminalOptions> = {}) => runTty(args, { env, cwd: dir, ...o });

/** No raw control in what the terminal got; `shown`: the hostile text is there, escaped. */
function expectSafe(label: string, r: TerminalResult, o: { code?: number; shown?: boolean; allowed?: RegExp[] } = {}): void {
  const dump = `${label} (exit ${r.code}):\n${r.text}`;
  expect(rawControls(r.out, o.allowed), `stdout of ${dump}`).toEqual([]);
  expect(rawControls(r.err, o.allowed), `stderr of ${dump}`).toEqual([]);
  expect(r.text, dump).not.toMatch(/unexpected error/);
  if (o.code !== undefined) expect(r.code, dump).toBe(o.code);
  if (o.shown ?? true) expect(r.text, dump).toContain(SHOWN);
}

/** The --json document (or lines) of a result, parsed. */
function json<T = unknown>(r: TerminalResult): T {
  return JSON.parse(r.out.toString('utf8')) as T;
}

/** Polls `status --json` until the session waits for `status`. */
async function waitForStatus(sessionId: string, status: string): Promise<void> {
  await expect
    .poll(async () => {
      const r = await piped(['status', sessionId, '--json']);
      return r.code === 0 ? json<{ status: string }>(r).status : r.text;
    }, { timeout: 30_000, interval: 300 })
    .toBe(status);
}

describe('through pipes', () => {
  it('run, status, approve, answer and deny show the model\'s text escaped; --json parses back to it', async () => {
    const run = await piped(['run', '--model', `scripted:${evilScript}`, '--session', SOURCE, 'do the thing']);
    expectSafe('run (approval pending)', run, { code: 3 });

    await waitForStatus(SOURCE, 'waiting_for_approval');
    expectSafe('status (approval)', await piped(['status', SOURCE]), { code: 0 });
    const statusJson = await piped(['status', SOURCE, '--json']);
    expectSafe('status --json', statusJson, { code: 0 });
    expect(JSON.stringify(json(statusJson))).toContain(JSON.stringify(EVIL).slice(1, -1));

    expectSafe('approve (then the question)', await piped(['approve', SOURCE]), { code: 3 });
    await waitForStatus(SOURCE, 'waiting_for_user');
    expectSafe('status (question)', await piped(['status', SOURCE]), { code: 0 });
    expectSafe('answer (then an approval)', await piped(['answer', SOURCE, 'go on']), { code: 3 });
    const deny = await piped(['deny', SOURCE, '--reason', 'not that one']);
    expectSafe('deny (then the answer)', deny, { code: 0 });
    expect(deny.out.toString('utf8')).toContain('pwned-link');

    const again = await piped(['run', '--session', SOURCE, '--json', 'once more']);
    expectSafe('run --json', again, { code: 0, shown: false });
    expect(json<{ answer: string }>(again).answer).toBe(EVIL);
    expect(again.out.toString('utf8')).toContain('\\u009b');
  }, 240_000);

  it('status, sessions, trace (text, --full, --json) and replay of that session', async () => {
    // Read-only, so all at once: the run is as long as the slowest.
    const [status, sessions, sessionsJson, trace, full, spans, replay, replayJson] = await Promise.all([
      piped(['status', SOURCE]),
      piped(['sessions']),
      piped(['sessions', '--json']),
      piped(['trace', SOURCE]),
      piped(['trace', SOURCE, '--full']),
      piped(['trace', SOURCE, '--full', '--json']),
      piped(['replay', SOURCE]),
      piped(['replay', SOURCE, '--json']),
    ]);
    expectSafe('status (done)', status, { code: 0 });
    expectSafe('sessions', sessions, { code: 0, shown: false });
    expectSafe('sessions --json', sessionsJson, { code: 0, shown: false });
    expectSafe('trace', trace, { code: 0 });
    expectSafe('trace --full', full, { code: 0 });
    expectSafe('trace --full --json', spans, { code: 0, shown: false });
    const lines = spans.out.toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as { output: unknown });
    expect(lines.some((s) => JSON.stringify(s.output)?.includes(JSON.stringify(EVIL).slice(1, -1)))).toBe(true);
    expectSafe('replay', replay, { code: 0, shown: false });
    expectSafe('replay --json', replayJson, { code: 0, shown: false });
  }, 180_000);

  it('fork and rerun of the recorded turn', async () => {
    // Another seed.txt: the rerun differs at step 2 and shows both results.
    const fixtures = tempDir('harness-terminal-fixtures-');
    writeFileSync(path.join(fixtures, 'seed.txt'), `${EVIL} v2`);
    // Each makes its own new session: all at once.
    const [fork, forked, rerun] = await Promise.all([
      piped(['fork', `${SOURCE}/turn-1`, '--at-step', '7']),
      piped(['fork', `${SOURCE}/turn-1`, '--at-step', '7', '--json']),
      piped(['rerun', `${SOURCE}/turn-1`, '--workspace', fixtures]),
    ]);
    expectSafe('fork (the answer asked again)', fork, { code: 0 });
    expectSafe('fork --json', forked, { code: 0, shown: false });
    expect(json<{ answer: string }>(forked).answer).toBe(EVIL);
    expectSafe('rerun', rerun, { shown: false });
  }, 240_000);

  it('a failed turn\'s error line (run, then retry), chat, and eval (Markdown and --json)', async () => {
    const failing = (async () => {
      const run = await piped(['run', '--model', `scripted:${failScript}`, '--session', FAILING, 'fail']);
      return [run, await piped(['retry', `${FAILING}/turn-1`])];
    })();
    const [[failed, retried], chat, evalText, evalJson] = await Promise.all([
      failing,
      // The approval, the question and the answer inline, read from standard input.
      piped(['chat', '--model', `scripted:${askScript}`], { input: 'write it\ny\nmy answer\n' }),
      piped(['eval', evilSuite, '--out', path.join(dir, 'eval.json')]),
      piped(['eval', evilSuite, '--json', '--out', path.join(dir, 'eval-json.json')]),
    ]);
    expectSafe('run (failed)', failed!, { code: 1, shown: false });
    expectSafe('retry (fails again)', retried!, { code: 1, shown: false });
    expectSafe('chat', chat, { code: 0 });
    expectSafe('eval', evalText);
    expectSafe('eval --json', evalJson, { shown: false });
    expect(json<{ cases: { runs: { answer?: string }[] }[] }>(evalJson).cases[0]!.runs[0]!.answer).toBe(EVIL);
  }, 180_000);

  it('skills, mcp, sandbox doctor, trust and usage errors: text from files, servers and arguments', async () => {
    const skills = tempDir('harness-terminal-skills-');
    mkdirSync(path.join(skills, 'evil'));
    writeFileSync(path.join(skills, 'evil', 'SKILL.md'), '---\nname: evil\ndescription: "pwned-title \\e]0;x\\a \\x9b31m \\u202e"\n---\nbody\n');
    const broken = path.join(skills, 'broken-\u001b]0;pwned-title\u0007');
    mkdirSync(broken);
    writeFileSync(path.join(broken, 'SKILL.md'), 'no front matter\n');
    const skillsEnv = { env: { ...env, HARNESS_SKILLS_DIRS: skills } };
    // A server that dies saying something hostile on stderr: `harness mcp` shows why it failed.
    const config = path.join(dir, 'mcp.config.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { evil: { command: process.execPath, args: ['-e', `process.stderr.write(${JSON.stringify(EVIL)}); process.exit(1)`], startupTimeoutSec: 5 } } }));
    const bad = path.join(dir, 'harness.bad.json');
    writeFileSync(bad, `{"model": "${EVIL}`);
    const [skillsText, skillsJson, mcp, mcpJson, doctor, trust, usage] = await Promise.all([
      piped(['skills'], skillsEnv),
      piped(['skills', '--json'], skillsEnv),
      piped(['mcp', '--config', config]),
      piped(['mcp', '--config', config, '--json']),
      piped(['sandbox', 'doctor'], { env: { ...env, HARNESS_SANDBOX_IMAGE: 'img\u001b]0;pwned-title\u0007' } }),
      piped(['trust', bad]),
      piped(['status', 'x\u001b]0;pwned-title\u0007']),
    ]);
    expectSafe('skills', skillsText, { code: 0 });
    expectSafe('skills --json', skillsJson, { code: 0, shown: false });
    expectSafe('mcp', mcp, { code: 1 });
    expectSafe('mcp --json', mcpJson, { code: 1, shown: false });
    expectSafe('sandbox doctor', doctor, { shown: false });
    expectSafe('trust (invalid JSON)', trust, { code: 2, shown: false });
    expectSafe('usage error', usage, { code: 2, shown: false });
  }, 120_000);
});

describe('the worker\'s log', () => {
  it('`harness worker` logs an activity failure that quotes the model endpoint\'s reply escaped', async () => {
    // Its own task queue, so that the turn runs on this worker (whose stderr is the terminal of `harness worker`).
    const queue = `terminal-worker-${Date.now()}`;
    const workerEnv = { ...env, HARNESS_TASK_QUEUE: queue };
    const worker = spawnCli(['worker'], { env: workerEnv, cwd: dir });
    const err: Buffer[] = [];
    worker.stdout!.on('data', () => undefined);
    worker.stderr!.on('data', (d: Buffer) => err.push(d));
    const logged = (re: RegExp) => re.test(Buffer.concat(err).toString('utf8'));
    try {
      for (let i = 0; i < 300 && !logged(/worker ready/); i++) await sleep(200);
      expect(logged(/worker ready/), Buffer.concat(err).toString('utf8')).toBe(true);
      const run = await piped(['run', '--model', `scripted:${failScript}`, 'fail'], { env: workerEnv });
      expectSafe('run on `harness worker`', run, { code: 1, shown: false });
      for (let i = 0; i < 100 && !logged(/Activity failed/); i++) await sleep(200);
    } finally {
      await stopChild(worker);
    }
    const log = Buffer.concat(err);
    expect(log.toString('utf8'), 'the failure was logged').toMatch(/Activity failed[\s\S]*pwned-c1/);
    expect(rawControls(log), log.toString('utf8')).toEqual([]);
  }, 120_000);
});

describe('on a terminal (a pseudo-terminal through util-linux script)', () => {
  /** Answers to the inline prompts: approve the write, answer the question. */
  const approveAndAnswer: Reply[] = [
    { after: /for this session > $/, send: 'y\r' },
    { after: /\n> $/, send: 'my answer\r' },
  ];

  it('has `script` to run the CLI on a pty', () => {
    expect(haveScript(), 'util-linux `script` (Debian: bsdutils) is needed for the terminal tests').toBe(true);
  });

  it('run asks for the approval and the question inline and prints the answer', async () => {
    const r = await tty(['run', '--model', `scripted:${askScript}`, 'write it'], { replies: approveAndAnswer });
    expectSafe('run on a tty', r, { code: 0 });
  }, 120_000);

  it('chat: the prompt, the approval, the question and the answer', async () => {
    const r = await tty(['chat', '--model', `scripted:${askScript}`], {
      replies: [{ after: /you> $/, send: 'write it\r' }, ...approveAndAnswer, { after: /you> $/, send: '/exit\r' }],
    });
    expectSafe('chat on a tty', r, { code: 0 });
  }, 120_000);

  it('status, a failed turn\'s error, eval\'s progress line', async () => {
    const [status, retry, evalRun] = await Promise.all([
      tty(['status', SOURCE]),
      tty(['retry', `${FAILING}/turn-1`]),
      tty(['eval', evilSuite, '--out', path.join(dir, 'eval-tty.json')]),
    ]);
    expectSafe('status on a tty', status, { code: 0 });
    expectSafe('retry on a tty', retry, { code: 1, shown: false });
    expectSafe('eval on a tty', evalRun);
  }, 180_000);

  it('trace in colour: the only sequences are our own colours', async () => {
    const ours = [/\u001b\[(?:0|1|2|3[1-6])m/g]; // eslint-disable-line no-control-regex
    const colour: NodeJS.ProcessEnv = { ...env, TERM: 'xterm-256color' };
    delete colour.NO_COLOR;
    const r = await tty(['trace', SOURCE, '--full'], { env: colour });
    expectSafe('trace on a colour tty', r, { code: 0, allowed: ours });
    expect(r.out.toString('utf8'), 'colours are on').toMatch(ours[0]!);
  }, 60_000);
});
