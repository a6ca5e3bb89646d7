/**
 * User mistakes get the documented exit code (1 error, 2 usage), an `error:` line, a `hint:`
 * line and never a stack trace; every command explains itself with --help.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../scripts/free-port';
import { cliEnv, describeResult, removeTempDirs, ROOT, runCli, spawnCli, stackLines, tempDir, type CliResult } from '../support/cli';

const DEMO = path.join(ROOT, 'examples', 'demo.json');

let env: NodeJS.ProcessEnv;

beforeAll(() => {
  const home = tempDir('harness-cli-errors-home-');
  // A reachable server but a task queue nobody serves: a command that wrongly got as far as
  // starting a turn would hang (and time out) rather than start an embedded server on 7233.
  env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `cli-errors-unserved-${process.pid}`, HARNESS_HOME: home });
});
afterAll(() => removeTempDirs());

/** Runs the CLI in `cwd` (default: an empty temp dir). */
function cli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  return runCli(args, { env: opts.env ?? env, cwd: opts.cwd ?? tempDir('harness-cli-errors-'), timeoutMs: opts.timeoutMs ?? 30_000 });
}

/** The shape of every user error: exit code, `error:` first, a `hint:` line, no stack. */
function expectUserError(r: CliResult, code: 1 | 2): void {
  const dump = describeResult(r);
  expect(r.code, dump).toBe(code);
  expect(r.errLines[0], dump).toMatch(/^error: \S/);
  expect(
    r.errLines.some((l) => /^hint: \S/.test(l)),
    dump,
  ).toBe(true);
  expect(stackLines(r.stderr), dump).toEqual([]);
  expect(r.stderr, dump).not.toMatch(/unexpected error|\bat .*\.js:\d+/);
  expect(r.stdout, dump).toBe('');
}

/** A temp dir holding a harness.config.json with `content`. */
function dirWithConfig(content: unknown): string {
  const dir = tempDir('harness-cli-config-');
  writeFileSync(path.join(dir, 'harness.config.json'), JSON.stringify(content));
  return dir;
}

describe('user errors', () => {
  it('`status` of an unknown session exits 1', async () => {
    const r = await cli(['status', 'no-such-session-here']);
    expectUserError(r, 1);
    expect(r.errLines[0]).toContain('no-such-session-here');
  });

  it('`run` without a task exits 2', async () => {
    const r = await cli(['run', '--model', `scripted:${DEMO}`]);
    expectUserError(r, 2);
    expect(r.errLines[0]).toMatch(/task/);
  });

  it('`run --max-steps 0` exits 2', async () => {
    const r = await cli(['run', '--model', `scripted:${DEMO}`, '--max-steps', '0', 'do it']);
    expectUserError(r, 2);
    expect(r.errLines[0]).toMatch(/max-steps/);
  });

  it('an unknown command exits 2', async () => {
    const r = await cli(['frobnicate']);
    expectUserError(r, 2);
    expect(r.errLines[0]).toMatch(/frobnicate/);
  });

  it('an unknown flag exits 2', async () => {
    const r = await cli(['run', '--frobnicate', 'do it']);
    expectUserError(r, 2);
    expect(r.errLines[0]).toMatch(/--frobnicate/);
  });

  it.each([
    [['fork', 's/turn-1', '--at-step', '2', '--policy', 'auto'], "error: unknown option '--policy'", 'harness fork'],
    [['run', '--polcy', 'auto', 'hi'], "error: unknown option '--polcy' (did you mean --policy?)", 'harness run'],
    [['schedule', 'create', '--bogus'], "error: unknown option '--bogus'", 'harness schedule create'],
    [['fork', 's/turn-1'], "error: required option '--at-step <n>' not specified", 'harness fork'],
    [['frobnicate'], "error: unknown command 'frobnicate'", 'harness'],
  ])('a command-line mistake (%j) is one `error:` line and a hint to that command\'s --help', async (args, line, command) => {
    const r = await cli(args);
    expectUserError(r, 2);
    expect(r.errLines).toEqual([line, `hint: see \`${command} --help\``]);
  });

  it('no model configured exits 1 and mentions --model', async () => {
    const r = await cli(['run', 'do it']);
    expectUserError(r, 1);
    expect(r.stderr).toMatch(/model/);
    expect(r.stderr).toContain('--model');
  });

  it('`--model scripted:missing.json` exits 2', async () => {
    const r = await cli(['run', '--model', 'scripted:missing.json', 'do it']);
    expectUserError(r, 2);
    expect(r.errLines[0]).toContain('missing.json');
  });

  it('a config file with a wrongly typed field exits 2 naming the field', async () => {
    const r = await cli(['run', '--model', `scripted:${DEMO}`, 'do it'], { cwd: dirWithConfig({ limits: { maxSteps: 'ten' } }) });
    expectUserError(r, 2);
    expect(r.errLines[0]).toContain('limits.maxSteps');
  });

  it('a config file with an unknown key exits 2 naming the key', async () => {
    const r = await cli(['run', '--model', `scripted:${DEMO}`, 'do it'], { cwd: dirWithConfig({ modle: 'gpt-4o-mini' }) });
    expectUserError(r, 2);
    expect(r.errLines[0]).toContain('modle');
  });

  it('an unreachable TEMPORAL_ADDRESS exits 1 saying Temporal cannot be reached, after saying it keeps trying', async () => {
    const port = await freePort();
    // A cluster may be restarting: the CLI tries again for a while, saying so, before it gives up.
    // (`trace`: commands that wait, `status`, `sessions` and `trace --follow` among them, wait for it
    // like for the rest; see waits.test.ts and durability/outage-views.test.ts.)
    const r = await cli(['trace', 'no-such-session'], { env: { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${port}` }, timeoutMs: 60_000 });
    expect(r.errLines[0], describeResult(r)).toMatch(/^waiting for Temporal at /);
    expectUserError({ ...r, errLines: r.errLines.slice(1) }, 1);
    expect(r.errLines[1]).toMatch(/cannot reach Temporal/i);
    expect(r.errLines[1]).toContain(`127.0.0.1:${port}`);
  }, 90_000);

  it.each([
    ['an empty name', 'app-a,,app-b', 'a queue name is empty'],
    ['a control character', 'app-a,app\u0007b', 'holds control characters'],
  ])('`harness console --queues` with %s exits 2, saying how to give them', async (_what, queues, why) => {
    const r = await cli(['console', '--queues', queues]);
    expectUserError(r, 2);
    expect(r.errLines[0]).toContain('--queues');
    expect(r.errLines[0]).toContain(why);
    expect(r.errLines[0]).toContain('e.g. --queues harness,my-app');
  });

  it('an invalid --session id exits 2', async () => {
    const r = await cli(['run', '--model', `scripted:${DEMO}`, '--session', 'bad id!', 'do it']);
    expectUserError(r, 2);
    expect(r.errLines[0]).toContain('bad id!');
  });

  it('`run --session` naming a session that does not exist, with no model for a new one, says so (not "no model configured")', async () => {
    const r = await cli(['run', '--session', 's-typo', 'hi']);
    expectUserError(r, 1);
    expect(r.errLines[0]).toBe('error: no session named s-typo');
    expect(r.stderr).toContain('`harness sessions` lists them');
  });

  it('a TEMPORAL_TLS_CERT file that does not exist exits 2 naming the variable and the file', async () => {
    const missing = path.join(tempDir('harness-cli-tls-'), 'missing-cert.pem');
    const r = await cli(['status', 'x'], { env: { ...env, TEMPORAL_TLS_CERT: missing, TEMPORAL_TLS_KEY: missing } });
    expectUserError(r, 2);
    expect(r.errLines[0]).toContain('TEMPORAL_TLS_CERT');
    expect(r.errLines[0]).toContain(missing);
  });

  it('a TEMPORAL_TLS_CERT without TEMPORAL_TLS_KEY exits 2 naming the missing variable', async () => {
    const r = await cli(['status', 'x'], { env: { ...env, TEMPORAL_TLS_CERT: path.join(ROOT, 'package.json') } });
    expectUserError(r, 2);
    expect(r.errLines[0]).toContain('TEMPORAL_TLS_KEY');
  });

  it.each([
    ['HARNESS_EMBEDDED_PORT', 'abc'],
    ['HARNESS_EMBEDDED_PORT', '0'],
    ['HARNESS_UI_PORT', '70000'],
  ])('%s=%s exits 2 naming the variable', async (name, value) => {
    // The embedded deployment: these ports are where it would connect or start a server.
    const embeddedEnv = { ...env, [name]: value };
    delete embeddedEnv.TEMPORAL_ADDRESS;
    const r = await cli(['status', 'x'], { env: embeddedEnv });
    expectUserError(r, 2);
    expect(r.errLines[0]).toContain(`${name}=${value}`);
    expect(r.stderr).not.toContain('NaN');
  });

  it.each(['abc', '0', '2.5', '1001'])('`sessions --limit %s` exits 2 naming the flag', async (value) => {
    const r = await cli(['sessions', '--limit', value]);
    expectUserError(r, 2);
    expect(r.errLines[0]).toContain('--limit');
  });
});

describe('--help', () => {
  it('`harness --help` exits 0 and lists the commands', async () => {
    const r = await cli(['--help']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(/^Usage: harness /);
    expect(r.stdout).toMatch(/durable/i);
    for (const cmd of ['run', 'chat', 'status', 'sessions', 'answer', 'end', 'dev', 'worker', 'model']) {
      expect(r.stdout).toMatch(new RegExp(`^\\s+${cmd}\\b`, 'm'));
    }
  });

  const commands: [string, string[]][] = [
    ['run', ['--session', '--model', '--max-steps', '--config', '--json']],
    ['chat', ['--session', '--model', '--config']],
    ['status', ['--json']],
    ['sessions', ['--limit', '--json']],
    ['answer', ['--json', '--no-wait']],
    ['end', []],
    ['dev', ['--stop']],
    ['worker', []],
    ['model serve', ['--script', '--port']],
    ['console', ['--port', '--host', '--queues']],
  ];
  it.each(commands)('`harness %s --help` exits 0 with a description and the options', async (cmd, flags) => {
    const r = await cli([...cmd.split(' '), '--help']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^Usage: harness ${cmd}\\b`));
    // Commander prints: usage line, blank line, description, blank line, sections.
    const description = r.stdout.split('\n')[2] ?? '';
    expect(description.trim().length, r.stdout).toBeGreaterThan(10);
    expect(r.stdout).toContain('Options:');
    for (const flag of [...flags, '--help']) expect(r.stdout).toContain(flag);
    expect(stackLines(r.stderr)).toEqual([]);
  });

  it('`harness --help` exits 0 even when the Temporal settings in the environment are broken', async () => {
    const missing = path.join(tempDir('harness-cli-tls-'), 'missing-cert.pem');
    const r = await cli(['--help'], { env: { ...env, TEMPORAL_TLS_CERT: missing, TEMPORAL_TLS_KEY: missing, HARNESS_EMBEDDED_PORT: 'abc' } });
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(/^Usage: harness /);
    expect(r.stderr, describeResult(r)).toBe('');
  });
});

describe('output into a closed pipe (`harness --help | head -1`)', () => {
  it('ends without a stack trace when the reader has gone away', async () => {
    const child = spawnCli(['--help'], { env, cwd: tempDir('harness-cli-epipe-') });
    // The reader closes before the CLI writes, as `head` does after its first lines.
    child.stdout!.destroy();
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
    clearTimeout(timer);
    expect(stackLines(stderr), `exit ${code}\n${stderr}`).toEqual([]);
    expect(stderr).not.toMatch(/EPIPE|Unhandled/);
  });
});
