/**
 * A worker's sweeps while it runs (workers/upkeep.ts), on the real dev server and Docker, through
 * createHarnessWorker (the same assembly as `harness worker`) under the default policy: an ended
 * session's container goes without a worker restart, an idle one is stopped and its next command
 * finds it with its files, and with Temporal unreachable nothing is removed.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarnessWorker, type HarnessWorker } from '../../index';
import { sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import { containerName, removeOrphans } from '../../activities/sandbox/containers';
import { SandboxPool } from '../../activities/sandbox/pool';
import { execsDir } from '../../activities/sandbox/exec-record';
import { sandboxOwners } from '../../workers/sandbox-owners';
import { upkeepSettings, WorkerUpkeep } from '../../workers/upkeep';
import { approveUntilDone, newSessionId, scriptedConfig, TEST_DATABASE_URL } from '../support/harness';
import { quietRuntime } from '../support/quiet-runtime';
import { until } from '../support/processes';

const docker = new Docker();
const taskQueue = `upkeep-${randomUUID()}`;
const home = mkdtempSync(path.join(os.tmpdir(), 'harness-upkeep-'));
const lines: string[] = [];
let worker: HarnessWorker;
let running: Promise<void>;
let client: Client;

beforeAll(async () => {
  quietRuntime();
  // Sweeps every second; a sandbox unused for 3 s is stopped.
  const env = { PATH: process.env.PATH, TEMPORAL_ADDRESS: inject('temporalAddress'), DATABASE_URL: TEST_DATABASE_URL, HARNESS_SANDBOX_SWEEP_SEC: '1', HARNESS_SANDBOX_IDLE_SEC: '3' };
  worker = await createHarnessWorker({ env, taskQueue, home, log: (l) => lines.push(l), bundlePath: inject('workflowBundle'), tuning: { drainGraceMs: 0 } });
  running = worker.run();
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }), namespace: 'default' });
}, 120_000);

afterAll(async () => {
  worker?.shutdown();
  await running?.catch(() => undefined);
  await client?.connection.close();
  await removeOrphans(docker, [], { home }).catch(() => undefined);
  rmSync(home, { recursive: true, force: true });
});

/** A session's script: per turn, a command (approved) and an answer once its result holds what is expected. */
function shellScript(turns: Array<{ command: string; expected: string }>) {
  return scriptedConfig({
    steps: turns.flatMap(({ command, expected }) => [{ tool_calls: [{ name: 'run_shell', arguments: { command } }] }, { expect: { last_message_contains: expected }, content: 'ran it' }]),
  });
}

/** One turn of a new or running session (`config` is what it starts with). */
async function shellTurn(sessionId: string, config = shellScript([{ command: 'echo hi', expected: '"exit_code":0' }])) {
  const { turnId } = await sendMessage(client, { taskQueue, sessionId, config, text: 'run it' });
  const { result } = await approveUntilDone(client, sessionId, await waitForTurn(client, turnId, { pollMs: 100 }));
  return result;
}

const inspect = (sessionId: string) => docker.getContainer(containerName(sessionId)).inspect();

describe('the sweeps of a running worker', () => {
  it('remove the container of a session that ended without cleaning up, while the worker runs on', async () => {
    const sessionId = newSessionId('upkeep-ended');
    const r = await shellTurn(sessionId);
    expect(r.toolCalls.map((c) => [c.name, c.ok])).toEqual([['run_shell', true]]);
    expect((await inspect(sessionId)).Id).toBeTruthy();
    // Terminated: its own cleanup never runs.
    await client.workflow.getHandle(sessionId).terminate('test');
    await until('the sweep to remove its container', () => lines.includes(`sandbox: removed 1 container(s) of ended sessions: ${containerName(sessionId)}`), 60_000);
    await expect(inspect(sessionId)).rejects.toMatchObject({ statusCode: 404 });
    expect(existsSync(execsDir(home, sessionId))).toBe(false);
    expect(worker.worker.getState()).toBe('RUNNING');
  }, 120_000);

  it('stop an idle container, and the session\'s next command starts it again with its files', async () => {
    const sessionId = newSessionId('upkeep-idle');
    const config = shellScript([
      { command: 'echo kept > kept.txt', expected: '"exit_code":0' },
      { command: 'cat kept.txt', expected: 'kept' },
    ]);
    await shellTurn(sessionId, config);
    const first = await inspect(sessionId);
    const stopped = new RegExp(`^sandbox: stopped \\d+ container\\(s\\) unused for 3 s: .*${containerName(sessionId)}`);
    await until('the idle container to be stopped', () => lines.some((l) => stopped.test(l)), 60_000);
    expect((await inspect(sessionId)).State.Running).toBe(false);
    // The session is running: its sandbox is stopped, never removed.
    const r = await shellTurn(sessionId, config);
    expect(r.toolCalls.map((c) => [c.name, c.ok])).toEqual([['run_shell', true]]);
    expect(r.answer).toBe('ran it');
    const again = await inspect(sessionId);
    expect(again.Id).toBe(first.Id);
    expect(again.State.Running).toBe(true);
  }, 120_000);

  it('remove nothing when Temporal cannot be asked whether the owners run', async () => {
    // The owner question goes through a proxy that the test closes: Temporal is "unreachable".
    const target = inject('temporalAddress').split(':');
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((s) => {
      const up = net.connect(Number(target[1]), target[0]);
      for (const x of [s, up]) sockets.add(x);
      s.pipe(up).pipe(s);
      s.on('error', () => up.destroy());
      up.on('error', () => s.destroy());
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const connection = await NativeConnection.connect({ address: `127.0.0.1:${(proxy.address() as net.AddressInfo).port}` });
    const own = mkdtempSync(path.join(os.tmpdir(), 'harness-upkeep-down-'));
    const pool = new SandboxPool({ home: own });
    // No workflow has this id: with Temporal answering, its sandbox would be an orphan.
    const sessionId = newSessionId('upkeep-down');
    await pool.get(sessionId).exec('true', { timeoutMs: 20_000, key: 'turn-1/call-1' });
    const said: string[] = [];
    try {
      proxy.close();
      for (const s of sockets) s.destroy();
      const sweeps = new WorkerUpkeep({ pool, owned: sandboxOwners(connection, 'default', 2_000), mcpNotesDir: path.join(own, 'mcp-servers'), settings: { sweepMs: 0, idleMs: 0 }, log: (l) => said.push(l) });
      await sweeps.sweep();
      expect(said.join('\n')).toMatch(/^sandbox: could not tell which sessions have ended, so no sandbox was removed: /m);
      expect((await docker.getContainer(containerName(sessionId)).inspect()).State.Running).toBe(true);
      expect(existsSync(execsDir(own, sessionId))).toBe(true);
      // Asked through a connection that works, the same sweep removes it.
      const direct = await NativeConnection.connect({ address: inject('temporalAddress') });
      try {
        await new WorkerUpkeep({ pool, owned: sandboxOwners(direct, 'default'), mcpNotesDir: path.join(own, 'mcp-servers'), settings: { sweepMs: 0, idleMs: 0 }, log: (l) => said.push(l) }).sweep();
      } finally {
        await direct.close();
      }
      expect(said).toContain(`sandbox: removed 1 container(s) of ended sessions: ${containerName(sessionId)}`);
    } finally {
      await connection.close().catch(() => undefined);
      await removeOrphans(docker, [], { home: own }).catch(() => undefined);
      rmSync(own, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('upkeepSettings', () => {
  it('defaults to a sweep every 5 minutes and a stop after 30 idle minutes; a bad value names its variable', () => {
    expect(upkeepSettings({})).toEqual({ settings: { sweepMs: 300_000, idleMs: 1_800_000 }, problems: [] });
    expect(upkeepSettings({ HARNESS_SANDBOX_SWEEP_SEC: '0', HARNESS_SANDBOX_IDLE_SEC: '2.5' }).settings).toEqual({ sweepMs: 0, idleMs: 2_500 });
    expect(upkeepSettings({ HARNESS_SANDBOX_IDLE_SEC: '30m' }).problems).toEqual(['HARNESS_SANDBOX_IDLE_SEC is "30m": give seconds, a number from 0 (never) to 604800']);
  });
});
