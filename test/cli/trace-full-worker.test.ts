/**
 * `trace --full` on the default set-up: the background worker `harness run` started holds the
 * embedded database, and the trace reads the message store through the server that worker runs
 * (HARNESS_HOME/pgdata.endpoint) instead of being refused by the folder's lock.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeResult, removeTempDirs, runCli, tempDir, writeScript } from '../support/cli';
import { isolatedEmbeddedEnv, killDeployment, workerPids } from '../support/embedded-procs';

let dir: string;
let home: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dir = tempDir('harness-cli-full-');
  home = path.join(dir, 'home');
  env = await isolatedEmbeddedEnv(home);
});
afterAll(async () => {
  await runCli(['dev', '--stop'], { env, cwd: dir, timeoutMs: 60_000 }).catch(() => undefined);
  await killDeployment(home);
  removeTempDirs();
});

describe('trace --full while the background worker runs', () => {
  it('reads the payloads through the worker that holds the embedded database', async () => {
    const script = writeScript(dir, { steps: [{ tool_calls: [{ name: 'get_current_time', arguments: {} }] }, { content: 'It is time. FULL_OK' }] });
    const run = await runCli(['run', '--model', `scripted:${script}`, '--json', 'what time is it, said in full'], { env, cwd: dir, timeoutMs: 180_000 });
    expect(run.code, describeResult(run)).toBe(0);
    const sessionId = (JSON.parse(run.stdout) as { session_id: string }).session_id;
    // The worker still runs and holds the database; it notes where it serves it.
    expect(workerPids(home).length).toBeGreaterThan(0);
    const endpoint = path.join(home, 'pgdata.endpoint');
    expect(existsSync(endpoint)).toBe(true);
    expect(JSON.parse(readFileSync(endpoint, 'utf8'))).toMatchObject({ pid: workerPids(home)[0], port: expect.any(Number) });

    const r = await runCli(['trace', sessionId, '--full'], { env, cwd: dir, timeoutMs: 60_000 });
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stderr, describeResult(r)).not.toMatch(/cannot be read/);
    expect(r.stdout).toContain('[user]: what time is it, said in full');
    expect(r.stdout).toContain('reply: It is time. FULL_OK');

    // Stopping the worker takes its note away: nobody serves the folder any more.
    const stop = await runCli(['dev', '--stop'], { env, cwd: dir, timeoutMs: 60_000 });
    expect(stop.code, describeResult(stop)).toBe(0);
    expect(existsSync(endpoint)).toBe(false);
  }, 240_000);
});
