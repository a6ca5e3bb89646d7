/**
 * `harness status` tells a session's real state: a failed, terminated or
 * ended session says so with the reason and when, in text and --json, even with no worker to
 * answer its query; a running one answers as before.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { newSessionId, scriptedConfig, startHarness, type TestHarness } from '../support/harness';
import { quietRuntime } from '../support/quiet-runtime';
import { endSessionUpdate } from '../../deterministic/messages';
import { cliEnv, describeResult, parseJson, removeTempDirs, runCli, tempDir } from '../support/cli';

let h: TestHarness;
let dir: string;
const envFor = (taskQueue: string) => cliEnv({ TEMPORAL_ADDRESS: h.address, HARNESS_TASK_QUEUE: taskQueue, HARNESS_HOME: path.join(dir, 'home') });

beforeAll(async () => {
  h = await startHarness();
  dir = tempDir('harness-status-');
});
afterAll(async () => {
  await h?.stop();
  removeTempDirs();
});

describe('a session that failed', () => {
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  const taskQueue = `status-failed-${randomUUID()}`;

  afterAll(async () => {
    worker?.shutdown();
    await running;
  });

  it('says failed, with the activity and its message, and when (not the state its replay stops at)', async () => {
    // A worker whose last activity of a session fails for good, so the session itself fails
    // (sessions have failed so when their store writes ran out of attempts).
    quietRuntime();
    worker = await Worker.create({
      connection: await NativeConnection.connect({ address: inject('temporalAddress') }),
      taskQueue,
      workflowBundle: { codePath: inject('workflowBundle') },
      activities: {
        storeValue: async () => ({ $blob: 'test-script', bytes: 1, preview: '' }),
        closeSession: async () => {
          throw ApplicationFailure.nonRetryable('the sandbox could not be removed (test)', 'SANDBOX_STUCK');
        },
      },
    });
    running = worker.run();
    const sessionId = newSessionId('failed');
    const handle = await h.client.workflow.start('sessionWorkflow', {
      taskQueue,
      workflowId: sessionId,
      args: [{ sessionId, config: scriptedConfig({ steps: [{ content: 'never' }] }) }],
    });
    await handle.executeUpdate(endSessionUpdate, { args: [{}] });
    await expect(handle.result()).rejects.toThrow();

    const r = await runCli(['status', sessionId], { env: envFor(taskQueue), cwd: dir, timeoutMs: 60_000 });
    expect(r.code, describeResult(r)).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe(`session ${sessionId}: failed — its closeSession activity failed: the sandbox could not be removed (test)`);
    expect(lines[1]).toMatch(/^closed \d{4}-\d\d-\d\dT/);
    // Its turns as a worker replays them: none ran.
    expect(r.stdout).toContain('0 turn(s)');

    const json = parseJson<Record<string, unknown>>(await runCli(['status', sessionId, '--json'], { env: envFor(taskQueue), cwd: dir, timeoutMs: 60_000 }));
    expect(json).toMatchObject({ session_id: sessionId, status: 'failed', reason: expect.stringContaining('could not be removed'), turn_count: 0 });
    expect(typeof json.closed_at).toBe('string');
  }, 90_000);
});

describe('a session that was terminated or ended', () => {
  it('terminated: says so with the reason and who, and without a worker says what it cannot read', async () => {
    const unserved = `status-unserved-${randomUUID()}`;
    const sessionId = newSessionId('terminated');
    const handle = await h.client.workflow.start('sessionWorkflow', {
      taskQueue: unserved,
      workflowId: sessionId,
      args: [{ sessionId, config: scriptedConfig({ steps: [{ content: 'never' }] }) }],
    });
    await handle.terminate('stopped by the status test');
    const r = await runCli(['status', sessionId], { env: envFor(unserved), cwd: dir, timeoutMs: 60_000 });
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^session ${sessionId}: terminated — stopped by the status test \\(by .+\\)$`, 'm'));
    expect(r.stdout).toContain(`(turns and usage need a worker to read (none polls task queue ${unserved}))`);
    expect(r.stderr).toBe('');
  }, 60_000);

  it('ended: says who ended it, with its turns', async () => {
    const sessionId = newSessionId('ended');
    await h.finish(sessionId, scriptedConfig({ steps: [{ content: 'Done. HARNESS_OK' }] }), 'one turn');
    const env = envFor(h.taskQueue);
    const ended = await runCli(['end', sessionId], { env, cwd: dir, timeoutMs: 60_000 });
    expect(ended.code, describeResult(ended)).toBe(0);
    await h.client.workflow.getHandle(sessionId).result();

    const r = await runCli(['status', sessionId], { env, cwd: dir, timeoutMs: 60_000 });
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^session ${sessionId}: ended — ended by harness-cli \\S+$`, 'm'));
    expect(r.stdout).toContain('1 turn(s)');
    expect(r.stdout).toMatch(/^last turn \S+\/turn-1: final_answer in 1 step\(s\) — Done\. HARNESS_OK$/m);
    const json = parseJson<Record<string, unknown>>(await runCli(['status', sessionId, '--json'], { env, cwd: dir, timeoutMs: 60_000 }));
    expect(json).toMatchObject({ session_id: sessionId, status: 'ended', turn_count: 1, reason: expect.stringMatching(/^ended by harness-cli /) });
  }, 90_000);
});
