/**
 * What `harness dev` opens to a browser: by default only the console (behind its token), no
 * Temporal Web UI and an HTTP API that refuses every request; it says where to see sessions.
 * `--ui` opens the Web UI, for someone who asks for it. The built CLI, a real dev server.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { tcpProbe } from '../../client/temporal';
import { temporalSettings } from '../../client/temporal-settings';
import { removeTempDirs, spawnCli, stopChild, tempDir } from '../support/cli';
import { isolatedEmbeddedEnv, killDeployment } from '../support/embedded-procs';

const children: ChildProcess[] = [];
const homes: string[] = [];

afterAll(async () => {
  for (const c of children) await stopChild(c, 'SIGTERM');
  for (const home of homes) await killDeployment(home);
  removeTempDirs();
}, 60_000);

/** Starts `harness dev` with `args` in a home of its own; resolves with its output once its worker is ready. */
async function dev(args: string[]) {
  const scratch = tempDir('harness-dev-exposure-');
  const home = path.join(scratch, 'home');
  homes.push(home);
  const env = await isolatedEmbeddedEnv(home, { HARNESS_CONSOLE_PORT: '0' });
  const child = spawnCli(['dev', ...args], { env, cwd: scratch });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  for (let i = 0; i < 900 && !/worker ready/.test(out) && child.exitCode === null; i++) await sleep(200);
  expect(out, `harness dev should report its worker ready:\n${out}`).toMatch(/worker ready/);
  return { out, settings: temporalSettings(env) };
}

describe('`harness dev`', () => {
  it('serves no Web UI and refuses every HTTP API request, and prints the console link and `harness sessions`', async () => {
    const { out, settings } = await dev([]);
    expect(out).toMatch(/console: http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]{64}/);
    expect(out).toContain('`harness sessions`');
    expect(out).not.toContain(`:${settings.uiPort}`);
    expect(await tcpProbe(`127.0.0.1:${settings.uiPort}`, 2_000)).toBe('refused');
    const start = await fetch(`http://127.0.0.1:${settings.httpPort}/api/v1/namespaces/default/workflows/from-a-page`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: JSON.stringify({ workflowType: { name: 'sessionWorkflow' }, taskQueue: { name: settings.taskQueue } }),
    });
    expect(start.status).toBe(403);
    expect((await fetch(`http://127.0.0.1:${settings.httpPort}/api/v1/namespaces/default/workflows`)).status).toBe(403);
  }, 240_000);

  it('with --ui serves the Web UI on its port and says what that opens', async () => {
    const { out, settings } = await dev(['--ui']);
    expect(out).toContain(`Temporal Web UI on http://127.0.0.1:${settings.uiPort}`);
    expect(out).toMatch(/any Host header/);
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = await fetch(`http://127.0.0.1:${settings.uiPort}/`).then((r) => r.status, () => 0);
      if (status !== 200) await sleep(200);
    }
    expect(status).toBe(200);
  }, 240_000);
});
