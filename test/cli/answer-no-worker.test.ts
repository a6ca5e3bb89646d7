/**
 * `answer` while no worker polls the session's task queue: it says so in one line naming the
 * queue, keeps waiting, and delivers the answer once a worker is back (the turn then finishes).
 * A worker process of its own, killed and started again, on the shared dev server.
 */
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, expect, inject, it } from 'vitest';
import { TEST_DATABASE_URL } from '../support/harness';
import { kill, spawnWorker } from '../support/processes';
import { watchCli } from '../support/watched-cli';
import { cliEnv, removeTempDirs, tempDir, writeScript } from '../support/cli';

const dir = tempDir('harness-answer-no-worker-');
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
});
afterAll(() => removeTempDirs());

it('answer: with no worker polling, says so and waits; once a worker is back the answer is delivered and the turn finishes', async () => {
  // A worker process of its own, to stop and start again (the shared one stays up for the other tests).
  const taskQueue = `answer-no-worker-${process.pid}`;
  const workerEnv = cliEnv({ TEMPORAL_ADDRESS: inject('temporalAddress'), HARNESS_TASK_QUEUE: taskQueue, HARNESS_HOME: path.join(dir, 'answer-home'), DATABASE_URL: TEST_DATABASE_URL });
  let worker = await spawnWorker(workerEnv);
  const own = { ...workerEnv };
  const script = writeScript(dir, {
    steps: [
      { tool_calls: [{ name: 'ask_user', arguments: { question: 'Which colour?' } }] },
      { expect: { last_message_contains: 'green' }, content: 'You chose green. HARNESS_OK' },
    ],
  });
  try {
    const asked = watchCli(['run', '--model', `scripted:${script}`, 'pick a colour'], { env: own, cwd: dir });
    children.push(asked.child);
    const code = await new Promise<number | null>((resolve) => asked.child.once('close', (c) => resolve(c)));
    expect(code, asked.dump()).toBe(3);
    const sessionId = /^session (\S+) · /m.exec(asked.out.stderr)![1]!;
    await kill(worker, 'SIGKILL');

    const answer = watchCli(['answer', sessionId, 'green'], { env: own, cwd: dir });
    children.push(answer.child);
    // The first query may only time out (20 s) before Temporal says no poller is seen (measured up to 40 s under load).
    await answer.until(new RegExp(`^waiting: no worker polls task queue ${taskQueue} on Temporal at \\S+.*; retrying$`, 'm'), 80_000);
    worker = await spawnWorker(workerEnv);
    await answer.finished(90_000);
    expect(answer.out.stdout, answer.dump()).toContain('You chose green. HARNESS_OK');
    expect(answer.out.stderr, answer.dump()).toMatch(/^… a worker answers again$/m);
  } finally {
    await kill(worker, 'SIGKILL');
  }
}, 240_000);
