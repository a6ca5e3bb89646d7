/**
 * A harness worker with your own tools. Run it next to a Temporal server (`npx harness dev`,
 * or TEMPORAL_ADDRESS); it polls its own task queue, so the CLI's worker never takes its sessions.
 *
 *   npm run build && node dist/examples/custom-tool/worker.js
 */
import { createHarnessWorker, harnessHome } from 'durable-agent-harness';
import { lookupOrder, refundOrder } from './tools';

/** The task queue of this example's sessions (the client uses the same). */
export const TASK_QUEUE = process.env.HARNESS_TASK_QUEUE || 'custom-tool-example';

async function main(): Promise<void> {
  const worker = await createHarnessWorker({
    tools: [lookupOrder, refundOrder],
    // Only refund_order sees this, as ctx.secrets.PAYMENTS_TOKEN.
    secrets: { refund_order: { PAYMENTS_TOKEN: process.env.PAYMENTS_TOKEN || 'demo-token' } },
    taskQueue: TASK_QUEUE,
    // Its own home beside the project's default one, whose embedded database belongs to `harness dev`'s worker.
    home: process.env.HARNESS_HOME || `${harnessHome()}-custom-tool-example`,
  });
  await worker.run(); // until Ctrl-C
}

if (require.main === module) {
  main().catch((err: Error & { hint?: string }) => {
    console.error(`error: ${err.message}${err.hint ? `\nhint: ${err.hint}` : ''}`);
    process.exit(1);
  });
}
