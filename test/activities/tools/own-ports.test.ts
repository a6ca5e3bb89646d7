/**
 * The worker's own listening ports: those it registers, those of its process tree (/proc), and
 * those of its HARNESS_HOME's embedded Temporal server, which the CLI started and which is
 * therefore no descendant of a background worker.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownPortLookup, registerOwnPort } from '../../../activities/tools/own-ports';
import { processTreeListeners } from '../../../activities/tools/proc-listeners';
import { embeddedFiles } from '../../../client/embedded';
import { devServerArgs, waitForServer } from '../../../client/dev-server';
import { freePort } from '../../../scripts/free-port';
import { findTemporalCli } from '../../../client/temporal-cli';
import { temporalSettings, type TemporalSettings } from '../../../client/temporal-settings';

describe('registerOwnPort', () => {
  it('names a registered port until it is forgotten', async () => {
    const port = await freePort();
    const lookup = ownPortLookup();
    const forget = registerOwnPort(port, 'scripted model server');
    expect(await lookup(port)).toBe('scripted model server');
    forget();
    expect(await lookup(port)).toBeUndefined();
  });
});

describe("the embedded Temporal server of the worker's HARNESS_HOME", () => {
  let home: string;
  let settings: TemporalSettings;
  let pid: number;

  beforeAll(async () => {
    home = mkdtempSync(path.join(os.tmpdir(), 'harness-own-ports-'));
    settings = temporalSettings({ HARNESS_EMBEDDED_PORT: String(await freePort()), HARNESS_UI_PORT: String(await freePort()) });
    const files = embeddedFiles(home);
    // Started as the CLI starts it for a background worker: detached, not a child of this process.
    const shell = spawn('sh', ['-c', '"$0" "$@" >/dev/null 2>&1 & echo $!', findTemporalCli(), ...devServerArgs(settings, home)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    pid = Number(await new Promise<string>((resolve) => shell.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()))));
    await waitForServer(settings, files.serverLog, 90_000);
    writeFileSync(files.serverPid, `${pid}\n`);
  }, 120_000);

  afterAll(() => {
    if (pid) process.kill(pid, 'SIGKILL');
    rmSync(home, { recursive: true, force: true });
  });

  it('listens on its pinned gRPC, HTTP API and metrics ports, and on random ones besides', () => {
    const ports = [...(processTreeListeners([pid])?.own.keys() ?? [])];
    expect(ports).toEqual(expect.arrayContaining([settings.embeddedPort, settings.httpPort, settings.metricsPort]));
    expect(ports.length).toBeGreaterThan(3);
  });

  it('counts as the worker\'s own through the pid file, every port of it, the random ones too', async () => {
    const ports = [...processTreeListeners([pid])!.own.keys()];
    const lookup = ownPortLookup({ home });
    for (const port of ports) expect(await lookup(port), `port ${port}`).toMatch(new RegExp(`process \\(pid ${pid}\\)$`));
    // Without the home it is just some process on this machine.
    const foreign = ownPortLookup();
    for (const port of ports) expect(await foreign(port)).toBeUndefined();
  });
});
