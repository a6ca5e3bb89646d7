/**
 * `harness dev --stop` finds what it should stop even when `harness dev` itself died without
 * cleaning up, and never kills a process that only happens to have a pid named in a pid file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { describeResult, processAlive, removeTempDirs, runCli, spawnCli, stopChild, tempDir, waitGone } from '../support/cli';
import { isolatedEmbeddedEnv, killDeployment, serverPids } from '../support/embedded-procs';

const children: ChildProcess[] = [];
const homes: string[] = [];

afterAll(async () => {
  for (const c of children) await stopChild(c, 'SIGKILL');
  for (const home of homes) await killDeployment(home);
  removeTempDirs();
}, 60_000);

describe('`harness dev --stop` after `harness dev` was killed with SIGKILL', () => {
  it('stops the Temporal server the killed `harness dev` left running', async () => {
    const scratch = tempDir('harness-dev-kill-');
    const home = path.join(scratch, 'home');
    homes.push(home);
    const env = await isolatedEmbeddedEnv(home);
    const dev = spawnCli(['dev'], { env, cwd: scratch });
    children.push(dev);
    let out = '';
    dev.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    dev.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((resolve) => dev.once('exit', () => resolve()));
    for (let i = 0; i < 900 && !/worker ready/.test(out) && dev.exitCode === null; i++) await sleep(200);
    expect(out, `harness dev should report its worker ready:\n${out}`).toMatch(/worker ready/);

    const servers = serverPids(path.join(home, 'temporal.db'));
    expect(servers, 'harness dev should run one embedded server').toHaveLength(1);
    dev.kill('SIGKILL');
    await exited;
    expect(processAlive(servers[0]!), 'the server outlives a SIGKILLed `harness dev`').toBe(true);

    const r = await runCli(['dev', '--stop'], { env, cwd: scratch, timeoutMs: 60_000 });
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr, describeResult(r)).toContain(`server (pid ${servers[0]})`);
    expect(await waitGone(servers[0]!), `server pid ${servers[0]} should be gone`).toBe(true);
  }, 240_000);
});

describe('`harness dev --stop` with pid files naming processes that are not ours', () => {
  it('leaves an unrelated live process alone and says the pid files were stale', async () => {
    const scratch = tempDir('harness-dev-stale-');
    const home = path.join(scratch, 'home');
    homes.push(home);
    mkdirSync(home, { recursive: true });
    // A recycled pid: the files name a live process that is neither a server nor a worker.
    const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
    children.push(sleeper);
    writeFileSync(path.join(home, 'server.pid'), String(sleeper.pid));
    writeFileSync(path.join(home, 'worker.pid'), String(sleeper.pid));
    const env = await isolatedEmbeddedEnv(home);

    const r = await runCli(['dev', '--stop'], { env, cwd: scratch, timeoutMs: 60_000 });
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr, describeResult(r)).toMatch(/stale server\.pid/);
    expect(r.stderr, describeResult(r)).toMatch(/stale worker\.pid/);
    expect(r.stderr, describeResult(r)).toMatch(/nothing was running/);
    await sleep(500);
    expect(processAlive(sleeper.pid!), 'the unrelated process must not be killed').toBe(true);
  }, 90_000);
});
