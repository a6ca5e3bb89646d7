/**
 * The embedded server cannot start because one of its pinned ports is taken: `harness run`
 * says why in its one-line error (the server's own reason, read from its log), not only
 * "exited (1)", starts nothing else, and leaves no pid file behind.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { exitReason } from '../../client/dev-server';
import { freePort } from '../../scripts/free-port';
import { describeResult, removeTempDirs, runCli, stackLines, tempDir, writeScript } from '../support/cli';
import { isolatedEmbeddedEnv, killDeployment } from '../support/embedded-procs';

const scratch = tempDir('harness-port-taken-');
const home = path.join(scratch, 'home');
let holder: Server | undefined;

afterAll(async () => {
  await new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve()));
  await killDeployment(home);
  removeTempDirs();
}, 60_000);

it('`harness run` names the taken port when the embedded server exits before answering', async () => {
  const taken = await freePort();
  holder = createServer();
  await new Promise<void>((resolve) => holder!.listen(taken, '127.0.0.1', resolve));
  const env = await isolatedEmbeddedEnv(home, { HARNESS_HTTP_PORT: String(taken) });
  const script = writeScript(scratch, { steps: [{ content: 'never' }] }, 'one-step.json');

  const r = await runCli(['run', '--model', `scripted:${script}`, 'hello'], { env, cwd: scratch, timeoutMs: 120_000 });
  expect(r.code, describeResult(r)).not.toBe(0);
  const error = r.stderr.split('\n').find((l) => l.startsWith('error:')) ?? '';
  expect(error, describeResult(r)).toMatch(/exited \(1\) before answering/);
  expect(error, describeResult(r)).toContain(`${taken}`);
  expect(error, describeResult(r)).toMatch(/address already in use/);
  expect(r.stderr, describeResult(r)).toMatch(/hint: see .*temporal\.log/);
  expect(stackLines(r.stderr), describeResult(r)).toEqual([]);
  // Nothing recorded as running: neither the server that never answered nor a worker.
  expect(existsSync(path.join(home, 'server.pid'))).toBe(false);
  expect(existsSync(path.join(home, 'worker.pid'))).toBe(false);
}, 150_000);

it('exitReason reads only what this start wrote, and none of its control characters', () => {
  const log = path.join(scratch, 'old.log');
  mkdirSync(scratch, { recursive: true });
  const earlier = 'Error: an earlier start failed\n';
  writeFileSync(log, `${earlier}started\nError: can't set port 1: \x1b[31mbind\x1b[0m\n`);
  expect(exitReason(log)).toBe("Error: can't set port 1: \\e[31mbind\\e[0m");
  expect(exitReason(log, Buffer.byteLength(earlier) + 'started\n'.length + 100)).toBeUndefined();
  writeFileSync(log, `${earlier}all fine\n`);
  expect(exitReason(log, Buffer.byteLength(earlier))).toBeUndefined();
  expect(exitReason(path.join(scratch, 'missing.log'))).toBeUndefined();
});
