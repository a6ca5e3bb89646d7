/**
 * bench:eval's floor: the CPU a trial costs when a trial is nothing but what the harness's trial
 * is made of in Temporal, a child workflow whose one local activity waits as long as the model
 * (bench/floor/workflows.js), run on the same dev server and in the same process at the same
 * concurrency. The harness's CPU a trial above it is what the harness itself adds.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { ownCpuMs } from './cpu';

/** What the floor cost a trial (ms of CPU) and how long its run took. */
export interface FloorRun {
  worker: number;
  server: number;
  wallMs: number;
}

// From dist/bench/ (where the compiled bench runs) to the sources' bench/floor/.
const FLOOR_WORKFLOWS = path.resolve(__dirname, '..', '..', 'bench', 'floor', 'workflows.js');

/** Runs `cases` floor trials at `concurrency` (after a warm-up of four) on a bare worker of its own. */
export async function floorCpu(client: Client, address: string, serverCpu: () => number, o: { cases: number; concurrency: number; delayMs: number }): Promise<FloorRun> {
  const connection = await NativeConnection.connect({ address });
  const taskQueue = `bench-floor-${randomUUID()}`;
  try {
    const worker = await Worker.create({
      connection,
      taskQueue,
      workflowsPath: FLOOR_WORKFLOWS,
      activities: { wait: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) },
    });
    return await worker.runUntil(async () => {
      const run = (cases: number, concurrency: number) => client.workflow.execute('floorEval', { taskQueue, workflowId: `${taskQueue}-${cases}`, args: [cases, concurrency, o.delayMs] });
      await run(4, 4);
      const [w0, s0, t0] = [ownCpuMs(), serverCpu(), performance.now()];
      const done = await run(o.cases, o.concurrency);
      if (done !== o.cases) throw new Error(`the floor ran ${String(done)} of ${o.cases} trials`);
      return { worker: (ownCpuMs() - w0) / o.cases, server: (serverCpu() - s0) / o.cases, wallMs: performance.now() - t0 };
    });
  } finally {
    await connection.close();
  }
}
