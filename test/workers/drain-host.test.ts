/**
 * The drain of a sandbox host's worker on the real dev server and Docker: its run_shell calls run
 * on the host queue's Worker, not the main one, and the drain still names the call it waits
 * for and counts it when it finishes (it said "no activity in flight … drained in 0.0 s" while
 * it waited for one).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import Docker from 'dockerode';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, expect, inject, it } from 'vitest';
import { createHarnessWorker } from '../../workers/worker';
import { InFlightActivities, runDraining } from '../../workers/drain';
import { DEFAULT_TUNING } from '../../workers/tuning';
import { hostQueueOf } from '../../deterministic/host';
import { Database } from '../../activities/memory/database';
import { SandboxPool } from '../../activities/sandbox/pool';
import { removeOrphans } from '../../activities/sandbox/containers';
import { adoptHome } from '../../machine/home-mark';
import { decideApprovals, sendMessage, sessionState } from '../../client/session-client';
import { newSessionId, scriptedConfig, TEST_DATABASE_URL } from '../support/harness';
import { quietRuntime } from '../support/quiet-runtime';
import { until } from '../support/processes';

const home = mkdtempSync(path.join(os.tmpdir(), 'harness-drain-host-'));
afterAll(async () => {
  await removeOrphans(new Docker(), [], { home }).catch(() => undefined);
  rmSync(home, { recursive: true, force: true });
});

it('a sandbox host draining with a run_shell call in flight on its host queue waits for it, names it and counts it', async () => {
  quietRuntime();
  adoptHome(home);
  const address = inject('temporalAddress');
  const taskQueue = `drain-host-${randomUUID()}`;
  const connection = await NativeConnection.connect({ address });
  const memory = new Database({ home, databaseUrl: TEST_DATABASE_URL });
  const client = new Client({ connection: await Connection.connect({ address }), namespace: 'default' });
  const inFlight = new InFlightActivities();
  const lines: string[] = [];
  try {
    const workers = await createHarnessWorker({
      connection,
      namespace: 'default',
      taskQueue,
      bundlePath: inject('workflowBundle'),
      home,
      env: {},
      memory,
      sandboxes: new SandboxPool({ home }),
      tuning: { ...DEFAULT_TUNING, drainGraceMs: 60_000 },
      inFlight,
      hostId: 'a',
    });
    const running = workers.run();
    const drained = runDraining(workers, running, { inFlight, graceMs: 60_000, taskQueue: `${taskQueue} (and sandbox host queue ${hostQueueOf(taskQueue, 'a')})`, log: (l) => lines.push(l) });

    const sessionId = newSessionId('drain-host');
    const command = 'echo started > started.txt; sleep 3; echo once >> done.txt';
    const config = scriptedConfig({ steps: [{ tool_calls: [{ name: 'run_shell', arguments: { command } }] }, { content: 'ran it' }] });
    const { turnId } = await sendMessage(client, { taskQueue, sessionId, config, text: 'run it' });
    await until('the run_shell approval', async () => (await sessionState(client, sessionId)).pending?.kind === 'approvals');
    await decideApprovals(client, sessionId, { approve: true });
    const ws = path.join(home, 'workspaces', sessionId);
    await until('the command to start', () => existsSync(path.join(ws, 'started.txt')));

    workers.shutdown();
    await drained;
    expect(lines[0]).toMatch(/^worker draining: stopped polling task queue \S+ \(and sandbox host queue \S+@host-a\); waiting up to 60 s for 1 activity in flight to finish: run_shell \([^)]*turn-1, call t1-s1-c0\)$/);
    expect(lines[1]).toMatch(/^worker drained in \d+\.\d s: 1 activity finished, none cut short; sandbox containers are kept/);
    // The drain waited for it: the command had ended when the worker was over.
    expect(readFileSync(path.join(ws, 'done.txt'), 'utf8')).toBe('once\n');
    await client.workflow.getHandle(turnId).terminate('test over').catch(() => undefined);
    await client.workflow.getHandle(sessionId).terminate('test over').catch(() => undefined);
  } finally {
    await client.connection.close();
    await connection.close().catch(() => undefined);
    await memory.close();
  }
}, 120_000);
