/**
 * Two real `harness worker` processes on one HARNESS_HOME with the embedded database (no
 * DATABASE_URL): only one can open it, so the second does not poll at all; it says so and waits,
 * and takes over when the first is killed. Sessions (each starting with a store write, the
 * scripted model's script, and writing a long-term memory) never land on a worker without the
 * database: none fails, none sees MEMORY_UNAVAILABLE. A worker whose database cannot be opened
 * for any other reason says why and exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { sendMessage } from '../../client/session-client';
import { waitForTurn } from '../../client/turn-wait';
import type { SessionConfig } from '../../deterministic/session-config';
import { approveUntilDone, newSessionId, scriptedConfig } from '../support/harness';
import { kill, ROOT } from '../support/processes';
import { cliEnv } from '../support/cli';
import { adoptHome } from '../../machine/home-mark';
import { figure } from '../support/figures';

const SESSIONS = 20;
const AT_ONCE = 5;

let client: Client;
const children: ChildProcess[] = [];
const homes: string[] = [];

beforeAll(async () => {
  client = new Client({ connection: await Connection.connect({ address: inject('temporalAddress') }) });
});
afterAll(async () => {
  for (const c of children) await kill(c, 'SIGKILL');
  await client?.connection.close();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

/** A `harness worker` process whose output is kept, with a wait for a line of it. */
function startWorker(env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'harness.js'), 'worker'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return {
    child,
    exited,
    output: () => output,
    async until(pattern: RegExp, timeoutMs = 90_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(output)) {
        if (child.exitCode !== null) throw new Error(`worker exited (${child.exitCode}) before ${pattern}: ${output}`);
        if (Date.now() > deadline) throw new Error(`no ${pattern} from the worker within ${timeoutMs} ms: ${output}`);
        await sleep(100);
      }
    },
  };
}

/** The pids of the processes polling a task queue (identities are `<pid>@<host>`), workflow and activity tasks. */
async function pollerPids(taskQueue: string): Promise<Set<number>> {
  const pids = new Set<number>();
  // temporal.api.enums.v1.TaskQueueType: 1 workflow, 2 activity (the proto package is not a direct dependency).
  for (const taskQueueType of [1, 2]) {
    const res = await client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue }, taskQueueType });
    for (const p of res.pollers ?? []) pids.add(Number(String(p.identity).split('@')[0]));
  }
  return pids;
}

function homeEnv(taskQueue: string): { home: string; env: NodeJS.ProcessEnv } {
  const home = mkdtempSync(path.join(os.tmpdir(), 'harness-two-workers-'));
  homes.push(home);
  adoptHome(home); // marked as this user's: one test puts a file where the database goes first
  const env = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: taskQueue, HARNESS_HOME: home });
  delete env.DATABASE_URL; // the embedded database under HARNESS_HOME, which one process can open
  return { home, env };
}

/** One session: its script is the session's first store write; step 1 writes a long-term memory. */
function sessionConfig(namespace: string, i: number): SessionConfig {
  const script = {
    steps: [
      { tool_calls: [{ name: 'remember_longterm', arguments: { text: `fact ${i} of the two-workers test` } }] },
      { expect: { last_message_contains: '"ok":true' }, content: `Remembered ${i}. HARNESS_OK` },
    ],
  };
  return { ...scriptedConfig(script), memory: { namespace, preload: 0 } };
}

it('a second worker on the same home does not poll while the first holds the embedded database; 20 sessions, none failed; it takes over when the first is killed', async () => {
  const taskQueue = `two-workers-${randomUUID()}`;
  const { env } = homeEnv(taskQueue);
  const first = startWorker(env);
  await first.until(/worker ready/);
  const second = startWorker(env);
  await second.until(/embedded database .* is in use by another process \(pid \d+\); waiting for it before polling/);
  expect(second.output()).toContain(`(pid ${first.child.pid})`);
  expect(second.output()).not.toMatch(/worker ready/);

  // Only the first polls; the second is waiting, with nothing routed to it.
  await expect.poll(async () => (await pollerPids(taskQueue)).has(first.child.pid!), { timeout: 20_000 }).toBe(true);
  expect((await pollerPids(taskQueue)).has(second.child.pid!)).toBe(false);

  const namespace = `two-workers-${randomUUID().slice(0, 8)}`;
  const outcomes: string[] = [];
  for (let batch = 0; batch < SESSIONS; batch += AT_ONCE) {
    const ids = Array.from({ length: AT_ONCE }, (_, k) => batch + k);
    outcomes.push(
      ...(await Promise.all(
        ids.map(async (i) => {
          const sessionId = newSessionId(`two-${i}`);
          const { turnId } = await sendMessage(client, { taskQueue, sessionId, config: sessionConfig(namespace, i), text: 'remember a fact' });
          // The default policy asks about the long-term write; the person approves it.
          const { result: r, asked } = await approveUntilDone(client, sessionId, await waitForTurn(client, turnId, { pollMs: 200 }));
          if (asked.length !== 1) return `${sessionId}: asked ${asked.length} times`;
          const problems = r.toolCalls.filter((c) => !c.ok).map((c) => c.error_type ?? 'error');
          const session = (await client.workflow.getHandle(sessionId).describe()).status.name;
          return `${r.terminated_by}${problems.length ? ` ${problems.join(',')}` : ''} ${session}`;
        }),
      )),
    );
  }
  expect(outcomes).toEqual(Array.from({ length: SESSIONS }, () => 'final_answer RUNNING'));
  expect((await pollerPids(taskQueue)).has(second.child.pid!)).toBe(false);

  // The first goes away: the second opens the database and polls, and sessions go on with it.
  const killedAt = Date.now();
  await kill(first.child, 'SIGKILL');
  await second.until(/worker ready/);
  figure('two-workers', `the waiting worker polled ${Date.now() - killedAt} ms after the first was killed`);
  const sessionId = newSessionId('two-after');
  const { turnId } = await sendMessage(client, { taskQueue, sessionId, config: sessionConfig(namespace, SESSIONS), text: 'remember a fact' });
  const { result: after, asked } = await approveUntilDone(client, sessionId, await waitForTurn(client, turnId, { pollMs: 200 }));
  expect(asked).toHaveLength(1);
  expect(after.answer).toBe(`Remembered ${SESSIONS}. HARNESS_OK`);
  expect(after.toolCalls.map((c) => c.ok)).toEqual([true]);
}, 600_000);

it('a worker whose embedded database cannot be opened for another reason says why in one line and exits without polling', async () => {
  const taskQueue = `two-workers-bad-${randomUUID()}`;
  const { home, env } = homeEnv(taskQueue);
  writeFileSync(path.join(home, 'pgdata'), 'not a folder'); // where the database folder should be
  const w = startWorker(env);
  expect(await w.exited).toBe(1);
  const lines = w.output().trim().split('\n').filter((l) => !/^(skills|sandbox|declared):/.test(l));
  expect(lines).toEqual([
    expect.stringMatching(/^error: memory database unavailable: the embedded database .*pgdata cannot be opened .*; the worker does not poll without its message store$/),
    expect.stringMatching(/^hint: /),
  ]);
  expect((await pollerPids(taskQueue)).size).toBe(0);
}, 120_000);
