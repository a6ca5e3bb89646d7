/**
 * examples/custom-tool runs as the README says: its worker (built, as a user runs it) on the
 * test dev server, its client with --yes, and `harness trace` showing both custom tools, the
 * refund asked about and approved, its result in the span.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, expect, inject, it } from 'vitest';
import { cliEnv, describeResult, removeTempDirs, ROOT, runCli, stopChild, tempDir, type CliResult } from '../support/cli';
import { TEST_DATABASE_URL } from '../support/harness';

const EXAMPLE = path.join(ROOT, 'dist', 'examples', 'custom-tool');
let worker: ChildProcess | undefined;
let exampleHome: string | undefined;

afterAll(async () => {
  await stopChild(worker);
  removeTempDirs();
  if (exampleHome) rmSync(exampleHome, { recursive: true, force: true });
});

/** Starts a built example script; resolves once `ready` shows in its output (undefined: it exits). */
function node(script: string, args: string[], env: NodeJS.ProcessEnv, ready?: string): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [path.join(EXAMPLE, script), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<CliResult>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr, errLines: stderr.split('\n').filter(Boolean) })),
  );
  if (ready) {
    const timer = setInterval(() => {
      if ((stdout + stderr).includes(ready)) {
        clearInterval(timer);
        child.emit('ready');
      }
    }, 100);
    void done.then(() => clearInterval(timer));
  }
  return { child, done };
}

it('the custom-tool example: a worker with two TypeScript tools and a client that approves the refund', async () => {
  const home = tempDir('harness-example-');
  // HARNESS_HOME exported (the home whose embedded database `harness dev`'s worker holds): the
  // example keeps to a home of its own beside it rather than wait for that database.
  exampleHome = `${home}-custom-tool-example`;
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: `example-${randomUUID()}`, HARNESS_HOME: home, DATABASE_URL: TEST_DATABASE_URL });
  const w = node('worker.js', [], env, 'worker ready');
  worker = w.child;
  await new Promise<void>((resolve, reject) => {
    w.child.once('ready', () => resolve());
    void w.done.then((r) => reject(new Error(`the example worker exited: ${describeResult(r)}`)));
  });

  const client = await node('client.js', ['--yes'], env).done;
  expect(client.code, describeResult(client)).toBe(0);
  expect(client.stdout).toMatch(/the agent wants to run refund_order \{"order_id":"A-1001","reason":"arrived broken"\}/);
  expect(client.stdout).toContain('Order A-1001 (a teapot) is refunded: 39 EUR, refund R-A-1001.');
  const sessionId = /^session (\S+)$/m.exec(client.stdout)![1]!;
  expect(readFileSync(path.join(exampleHome, 'workspaces', sessionId, 'refunds.log'), 'utf8')).toBe('A-1001\t39 EUR\tarrived broken\n');

  const trace = await runCli(['trace', sessionId, '--json'], { env });
  expect(trace.code, describeResult(trace)).toBe(0);
  const spans = trace.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; name: string; source?: string; span_id: string; parent_id: string | null; input: Record<string, unknown>; output: Record<string, unknown> | null });
  const calls = spans.filter((s) => s.type === 'tool_call');
  expect(calls.map((s) => [s.name, s.source, (s.input.policy as { decision: string }).decision])).toEqual([
    ['lookup_order', 'custom', 'allow'],
    ['refund_order', 'custom', 'ask'],
  ]);
  expect(calls[1]!.output).toMatchObject({ ok: true, result: { refund_id: 'R-A-1001', refunded: true } });
  expect(spans.find((s) => s.type === 'approval' && s.parent_id === calls[1]!.span_id)?.output).toMatchObject({ approved: true });

  // Ctrl-C (SIGTERM here) stops the worker and closes what it opened: the process ends by itself.
  w.child.kill('SIGTERM');
  const stopped = await Promise.race([w.done, new Promise<undefined>((resolve) => setTimeout(resolve, 20_000))]);
  expect(stopped?.code, stopped ? describeResult(stopped) : 'the worker did not exit within 20 s of SIGTERM').toBe(0);
}, 120_000);
