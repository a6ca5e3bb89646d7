/**
 * The watch on a workflow thread, against real Node threads: it terminates a thread that has
 * work and does not answer within the limit, and never one whose answer is already waiting while
 * the main thread itself was busy (a synchronous call in the worker's process, a GC pause).
 */
import { Worker as NodeWorker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { WatchedThread, WorkflowThreadStuckError, type ThreadClient } from '../../workers/workflow-threads';
import { until } from '../support/processes';

const ECHO = `require('node:worker_threads').parentPort.on('message', (m) => require('node:worker_threads').parentPort.postMessage(m));`;
const SPIN = `require('node:worker_threads').parentPort.on('message', () => { for (;;); });`;
const LIMIT_MS = 200;

const threads: NodeWorker[] = [];
afterEach(async () => {
  await Promise.all(threads.splice(0).map((t) => t.terminate()));
});

/** A real thread running `code`, watched; the client sends one message and takes the next reply. */
function watched(code: string) {
  const thread = new NodeWorker(code, { eval: true });
  threads.push(thread);
  const logged: string[] = [];
  const client = {
    send: (input: unknown) =>
      new Promise((resolve, reject) => {
        thread.once('message', resolve);
        thread.once('exit', () => reject(new Error('thread exited')));
        thread.postMessage(input);
      }),
    getActiveWorkflowCount: () => 0,
    destroy: async () => undefined,
  } as unknown as ThreadClient;
  const watch = WatchedThread.watching(thread, client, { limitMs: LIMIT_MS, logger: { error: (m: string) => logged.push(m) } });
  return { watch, logged };
}

function blockMainThread(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end);
}

describe('the workflow thread watch', () => {
  it('keeps a thread that answered while the main thread was blocked past the limit', async () => {
    const { watch, logged } = watched(ECHO);
    await watch.send({ type: 'warm' } as never);
    // Sent and then blocked outside the port's own callback (here in the check phase, as after
    // any other I/O): the thread answers at once, and the event loop's next round runs its due
    // timers, the watch's among them, before it polls the port that holds the answer.
    const { reply } = await new Promise<{ reply: Promise<unknown> }>((resolve) =>
      setImmediate(() => {
        const sent = watch.send({ type: 'ping' } as never);
        blockMainThread(LIMIT_MS * 3);
        resolve({ reply: sent });
      }),
    );
    await expect(reply).resolves.toEqual({ type: 'ping' });
    await new Promise((r) => setTimeout(r, LIMIT_MS * 2));
    expect(watch.alive).toBe(true);
    expect(logged).toEqual([]);
    await expect(watch.send({ type: 'again' } as never)).resolves.toEqual({ type: 'again' });
  });

  it('terminates a thread that has work and never answers, and its request fails as a stuck thread', async () => {
    const { watch, logged } = watched(SPIN);
    const reply = watch.send({ type: 'ping' } as never);
    await expect(reply).rejects.toThrow(WorkflowThreadStuckError);
    await expect(reply).rejects.toThrow(`Potential deadlock detected: workflow code ran ${LIMIT_MS} ms without yielding`);
    expect(watch.alive).toBe(false);
    await until('the kill logged', () => logged.length === 1, 2_000);
    expect(logged[0]).toMatch(/^Workflow thread stuck: no answer in 200 ms/);
    // Later requests fail at once as well: the creator replaces the thread before the next workflow.
    await expect(watch.send({ type: 'again' } as never)).rejects.toThrow(WorkflowThreadStuckError);
  });

  it('never terminates an idle thread, however long it waits', async () => {
    const { watch } = watched(ECHO);
    await watch.send({ type: 'ping' } as never);
    await new Promise((r) => setTimeout(r, LIMIT_MS * 3));
    expect(watch.alive).toBe(true);
  });
});
