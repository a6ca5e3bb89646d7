/**
 * The harness Worker's watched workflow threads (workers/workflow-threads.ts), on a real dev
 * server: a workflow task that never yields fails as a deadlock within the limit, its thread is
 * replaced, the Worker keeps running, and workflows cached on the lost thread carry on by replay.
 * The stack-trace promise hook is off unless HARNESS_WORKFLOW_STACK_TRACES=1.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { quietRuntime } from '../support/quiet-runtime';
import { until } from '../support/processes';
import { WatchedWorker, stackTracesWanted } from '../../workers/workflow-threads';

let client: Client;
let connection: Connection;
beforeAll(async () => {
  quietRuntime();
  connection = await Connection.connect({ address: inject('temporalAddress') });
  client = new Client({ connection });
});
afterAll(async () => {
  await connection?.close();
});

async function withWorker<T>(taskQueue: string, work: () => Promise<T>): Promise<T> {
  const worker = await WatchedWorker.create({
    connection: await NativeConnection.connect({ address: inject('temporalAddress') }),
    taskQueue,
    workflowsPath: path.join(__dirname, 'fixtures', 'thread-workflows.ts'),
    isolateExecutionTimeout: '1s',
  });
  return worker.runUntil(async () => {
    const out = await work();
    expect(worker.getState()).toBe('RUNNING');
    return out;
  });
}

describe('watched workflow threads', () => {
  it('fail a task that never yields as a deadlock, replace the thread and keep serving', async () => {
    const taskQueue = `threads-${randomUUID()}`;
    await withWorker(taskQueue, async () => {
      const waiting = await client.workflow.start('waiting', { taskQueue, workflowId: `waiting-${randomUUID()}` });
      // Its first task ran (it is cached on the thread the spin will take down).
      await until('the waiting workflow\'s first task', async () => (await waiting.fetchHistory()).events!.some((e) => e.workflowTaskCompletedEventAttributes));
      const spin = await client.workflow.start('spin', { taskQueue, workflowId: `spin-${randomUUID()}` });
      const failure = await until('the spin task to fail', async () => {
        const events = (await spin.fetchHistory()).events ?? [];
        return events.find((e) => e.workflowTaskFailedEventAttributes)?.workflowTaskFailedEventAttributes?.failure?.message;
      }, 30_000);
      expect(failure).toMatch(/Potential deadlock detected: workflow code ran 1000 ms without yielding/);
      // A new workflow runs on the replacement thread; the cached one resumes by replay.
      expect(await client.workflow.execute('hello', { taskQueue, workflowId: `hello-${randomUUID()}`, args: ['there'] })).toBe('hello there');
      await waiting.signal('release');
      expect(await waiting.result()).toBe('released');
      await spin.terminate('test done');
    });
  }, 120_000);

  it('answer the __stack_trace query only when HARNESS_WORKFLOW_STACK_TRACES=1', async () => {
    expect(stackTracesWanted({})).toBe(false);
    expect(stackTracesWanted({ HARNESS_WORKFLOW_STACK_TRACES: '1' })).toBe(true);
    for (const wanted of [false, true]) {
      const before = process.env.HARNESS_WORKFLOW_STACK_TRACES;
      if (wanted) process.env.HARNESS_WORKFLOW_STACK_TRACES = '1';
      else delete process.env.HARNESS_WORKFLOW_STACK_TRACES;
      const taskQueue = `threads-trace-${randomUUID()}`;
      try {
        await withWorker(taskQueue, async () => {
          const w = await client.workflow.start('waiting', { taskQueue, workflowId: `trace-${randomUUID()}` });
          const query = w.query<string>('__stack_trace');
          if (wanted) expect(await query).toMatch(/waiting/);
          else await expect(query).rejects.toThrow(/stack traces are not enabled/);
          await w.signal('release');
          await w.result();
        });
      } finally {
        if (before === undefined) delete process.env.HARNESS_WORKFLOW_STACK_TRACES;
        else process.env.HARNESS_WORKFLOW_STACK_TRACES = before;
      }
    }
  }, 120_000);
});

