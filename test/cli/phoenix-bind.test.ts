/**
 * `npm run phoenix` (scripts/phoenix.sh) serves Phoenix to this machine only: its UI and
 * OTLP/HTTP port and its OTLP/gRPC port listen on 127.0.0.1 (Phoenix alone binds gRPC to every
 * interface), on the ports PHOENIX_PORT and PHOENIX_GRPC_PORT name.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port';
import { removeTempDirs, ROOT, stopChild, tempDir } from '../support/cli';

let child: ChildProcess | undefined;
afterAll(async () => {
  await stopChild(child);
  removeTempDirs();
});

/** The local addresses (hex, as /proc/net says them) of the sockets listening on `port`. */
function listeners(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const out: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      // 0A: LISTEN.
      if (state === '0A' && local?.endsWith(`:${hexPort}`)) out.push(local.slice(0, -5));
    }
  }
  return out;
}

// 127.0.0.1 as /proc/net/tcp writes it, and as an IPv4-mapped IPv6 address in tcp6.
const LOOPBACK = ['0100007F', '0000000000000000FFFF00000100007F'];

it('binds 127.0.0.1 by default, for the UI and both receivers', async () => {
  expect(existsSync(path.join(ROOT, '.venv', 'bin', 'phoenix')), 'Phoenix is not installed: npm run setup').toBe(true);
  const port = await freePort();
  let grpcPort = await freePort();
  while (grpcPort === port) grpcPort = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PHOENIX_PORT: String(port), PHOENIX_GRPC_PORT: String(grpcPort), PHOENIX_WORKING_DIR: tempDir('harness-phoenix-bind-') };
  delete env.PHOENIX_HOST;
  child = spawn('bash', [path.join(ROOT, 'scripts', 'phoenix.sh')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  for (let i = 0; i < 480 && !(await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)); i++) {
    expect(child.exitCode, output).toBeNull();
    await sleep(250);
  }
  expect(output).toContain(`[phoenix] http://127.0.0.1:${port}`);
  for (const p of [port, grpcPort]) {
    const bound = listeners(p);
    expect(bound.length, `nothing listens on ${p}:\n${output}`).toBeGreaterThan(0);
    for (const address of bound) expect(LOOPBACK, `port ${p} listens on ${address}`).toContain(address);
  }
}, 180_000);
