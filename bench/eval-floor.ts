/**
 * bench:eval's floor: the CPU a trial costs when a trial is nothing but what the harness's trial
 * is made of in Temporal, a child workflow whose one local activity waits as long as the model
 * (bench/floor/workflows.js), run on the same dev server and in the same process at the same
 * concurrency. The harness's CPU a trial above it is what the harness itself adds.
 *
 * The floor's worker runs beside the harness's for the whole bench, so each side's rounds are
 * measured with both workers polling (the idle one's polls and timers land in either's window).
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { ownCpuMs } from './cpu';

/** What a floor round cost a trial (ms of CPU) and how long it took. */
export interface FloorRun {
  worker: number;
  server: number;
  wallMs: number;
  /** The workflow that ran the round's trials (the floor's parent, the harness's eval). */
  workflowId: string;
}

/** A running floor worker: `round` runs trials on it; `close` stops it. */
export interface Floor {
  round(cases: number, concurrency: number): Promise<FloorRun>;
  close(): Promise<void>;
}

// From dist/bench/ (where the compiled bench runs) to the sources' bench/floor/.
const FLOOR_WORKFLOWS = path.resolve(__dirname, '..', '..', 'bench', 'floor', 'workflows.js');

/** Starts the floor's worker and warms it with four trials at four. */
export async function startFloor(client: Client, address: string, serverCpu: () => number, delayMs: number): Promise<Floor> {
  const connection = await NativeConnection.connect({ address });
  const taskQueue = `bench-floor-${randomUUID()}`;
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: FLOOR_WORKFLOWS,
    activities: { wait: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) },
  });
  const running = worker.run();
  let n = 0;
  const run = (workflowId: string, cases: number, concurrency: number) => client.workflow.execute('floorEval', { taskQueue, workflowId, args: [cases, concurrency, delayMs] });
  await run(`${taskQueue}-${n++}`, 4, 4);
  return {
    async round(cases, concurrency) {
      const workflowId = `${taskQueue}-${n++}`;
      const [w0, s0, t0] = [ownCpuMs(), serverCpu(), performance.now()];
      const done = await run(workflowId, cases, concurrency);
      if (done !== cases) throw new Error(`the floor ran ${String(done)} of ${cases} trials`);
      return { worker: (ownCpuMs() - w0) / cases, server: (serverCpu() - s0) / cases, wallMs: performance.now() - t0, workflowId };
    },
    async close() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}
